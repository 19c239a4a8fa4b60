// Command image assembles Podium's container image without a Docker engine or a
// registry: an OCI image (one layer) holding the static podium-operator and podium
// binaries and the files a distroless static image has for its non-root user (passwd and
// group entries for nonroot, 65532, its home, /tmp), with the entrypoint, user, ports and
// OCI labels set. It writes an OCI image layout directory and the same as an oci-archive
// tar, which podman load, skopeo copy oci-archive:..., crane push and docker load (25+)
// accept. The output is reproducible: every time stamp is --created.
//
// With --tool NAME=BINARY it assembles instead a minimal image of one static binary,
// /NAME, as entrypoint (same user, files and time stamps, no ports): the e2e node's
// images (its pause image and the Job's program, hack/e2e) are made this way, since
// nothing can be pulled there.
//
// It lives in a module of its own so that go-containerregistry stays out of Podium's
// go.mod.
package main

import (
	"archive/tar"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// NonRoot is distroless' nonroot user and group.
const NonRoot = 65532

func main() {
	var o Options
	flag.StringVar(&o.Operator, "operator", "", "static podium-operator binary")
	flag.StringVar(&o.CLI, "cli", "", "static podium binary")
	tool := flag.String("tool", "", "NAME=BINARY: a minimal image of this one static binary, /NAME its entrypoint (instead of --operator and --cli)")
	flag.StringVar(&o.Out, "out", "dist/image", "OCI image layout directory to write (replaced)")
	flag.StringVar(&o.Archive, "archive", "", "also write the layout as an oci-archive tar here")
	flag.StringVar(&o.Ref, "ref", "podium:dev", "image name recorded in the layout (org.opencontainers.image.ref.name)")
	flag.StringVar(&o.Version, "version", "dev", "org.opencontainers.image.version")
	flag.StringVar(&o.Revision, "revision", "", "org.opencontainers.image.revision (the git commit)")
	flag.StringVar(&o.Arch, "arch", runtime.GOARCH, "architecture the binaries were built for")
	epoch := flag.Int64("created", envInt("SOURCE_DATE_EPOCH", 0), "creation time, Unix seconds (env SOURCE_DATE_EPOCH)")
	flag.Parse()
	o.Created = time.Unix(*epoch, 0).UTC()
	if *tool != "" {
		name, src, ok := strings.Cut(*tool, "=")
		if !ok || name == "" || src == "" || strings.Contains(name, "/") {
			fmt.Fprintln(os.Stderr, "image: --tool wants NAME=BINARY")
			os.Exit(2)
		}
		o.Tool = &Tool{Name: name, Binary: src}
	}
	digest, err := Build(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
	fmt.Printf("%s %s\n", o.Out, digest)
}

// Options say what to put into the image and where to write it.
type Options struct {
	Operator, CLI          string
	Out, Archive           string
	Ref, Version, Revision string
	Arch                   string
	Created                time.Time
	// Tool, when set, makes a minimal image of that one binary instead of Podium's.
	Tool *Tool
}

// Tool is a minimal image's one binary: the file Binary, at /Name, its entrypoint.
type Tool struct{ Name, Binary string }

// Build writes the image and returns its manifest digest.
func Build(o Options) (v1.Hash, error) {
	layer, err := rootfsLayer(o)
	if err != nil {
		return v1.Hash{}, err
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), layer)
	if err != nil {
		return v1.Hash{}, err
	}
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	cf, err := img.ConfigFile()
	if err != nil {
		return v1.Hash{}, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Created = "linux", o.Arch, v1.Time{Time: o.Created}
	title, comment := "podium-operator", "podium-operator, podium, nonroot user"
	if o.Tool != nil {
		title, comment = o.Tool.Name, o.Tool.Name+", nonroot user"
	}
	cf.Config = v1.Config{
		User:       strconv.Itoa(NonRoot) + ":" + strconv.Itoa(NonRoot),
		Entrypoint: []string{"/podium-operator"},
		WorkingDir: "/",
		Env:        []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/home/nonroot"},
		ExposedPorts: map[string]struct{}{
			"8080/tcp": {}, // HTTP API
			"8081/tcp": {}, // health probes
			"8443/tcp": {}, // metrics (HTTPS)
		},
		Labels: map[string]string{
			"org.opencontainers.image.title":       title,
			"org.opencontainers.image.description": "Podium: hosted secrets and evaluation leaderboards for Kubernetes",
			"org.opencontainers.image.source":      "https://podium.dev/podium",
			"org.opencontainers.image.version":     o.Version,
			"org.opencontainers.image.revision":    o.Revision,
			"org.opencontainers.image.created":     o.Created.Format(time.RFC3339),
		},
	}
	if o.Tool != nil {
		cf.Config.Entrypoint = []string{"/" + o.Tool.Name}
		cf.Config.ExposedPorts = nil
		cf.Config.Labels["org.opencontainers.image.description"] = "Podium e2e: " + o.Tool.Name
	}
	cf.History = []v1.History{{Created: v1.Time{Time: o.Created}, CreatedBy: "hack/image", Comment: comment}}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return v1.Hash{}, err
	}
	if err := os.RemoveAll(o.Out); err != nil {
		return v1.Hash{}, err
	}
	p, err := layout.Write(o.Out, empty.Index)
	if err != nil {
		return v1.Hash{}, err
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": o.Ref})); err != nil {
		return v1.Hash{}, err
	}
	if o.Archive != "" {
		if err := archive(o.Out, o.Archive, o.Created); err != nil {
			return v1.Hash{}, err
		}
	}
	return img.Digest()
}

// rootfsLayer is the image's one layer: what distroless static gives a non-root
// program, and the two binaries.
func rootfsLayer(o Options) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dir := func(name string, mode int64, uid int) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: mode, Uid: uid, Gid: uid, ModTime: o.Created, Format: tar.FormatPAX})
	}
	file := func(name string, mode int64, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data)), ModTime: o.Created, Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	steps := []func() error{
		func() error { return dir("etc", 0o755, 0) },
		func() error {
			return file("etc/passwd", 0o644, []byte("root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"))
		},
		func() error {
			return file("etc/group", 0o644, []byte("root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n"))
		},
		func() error { return dir("home", 0o755, 0) },
		func() error { return dir("home/nonroot", 0o700, NonRoot) },
		func() error { return dir("tmp", 0o1777, 0) },
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return nil, err
		}
	}
	binaries := []struct{ src, name string }{{o.Operator, "podium-operator"}, {o.CLI, "podium"}}
	if o.Tool != nil {
		binaries = []struct{ src, name string }{{o.Tool.Binary, o.Tool.Name}}
	}
	for _, b := range binaries {
		if b.src == "" {
			continue
		}
		data, err := os.ReadFile(b.src)
		if err != nil {
			return nil, err
		}
		if err := file(b.name, 0o755, data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
}

// archive writes the layout directory as a tar (an oci-archive), files in name order.
func archive(dir, out string, mtime time.Time) error {
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	err = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() {
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: rel + "/", Mode: 0o755, ModTime: mtime})
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: rel, Mode: 0o644, Size: int64(len(data)), ModTime: mtime}); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return f.Close()
}

func envInt(key string, def int64) int64 {
	if v, err := strconv.ParseInt(os.Getenv(key), 10, 64); err == nil {
		return v
	}
	return def
}
