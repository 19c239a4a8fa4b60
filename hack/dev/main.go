// Command podium-dev runs Podium locally: an embedded control plane, the CRDs, the
// operator and the samples. It is what `make dev` starts.
package main

func main() {}
