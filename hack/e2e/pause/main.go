// Command pause is the e2e node's sandbox ("pause") container: it holds a Pod's
// namespaces and does nothing until it is told to stop. Nothing can be pulled on the
// machine the e2e runs on, so containerd's sandbox_image is this program, assembled into
// an image by hack/image --tool (docs/development.md, "The e2e node").
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
}
