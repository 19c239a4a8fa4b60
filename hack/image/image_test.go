package main

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestImageRunsTheOperator builds the image from freshly built static binaries, then
// reads it back with the standard library alone, as a container runtime would (index,
// manifest, config, layers, each checked against its digest), unpacks its root file
// system and runs `/podium-operator --help` from it: chrooted into it as the image's
// user when the test runs as root (CI does), from the unpacked directory otherwise.
func TestImageRunsTheOperator(t *testing.T) {
	tmp := t.TempDir()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bins := map[string]string{"podium-operator": "./cmd/operator", "podium": "./cmd/podium"}
	for name, pkg := range bins {
		// Static, as `make image` builds them; without its -trimpath, so that the
		// packages come from the build cache `make build` filled.
		cmd := exec.Command("go", "build", "-ldflags", "-s -w", "-o", filepath.Join(tmp, name), pkg)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("building %s: %v\n%s", name, err, out)
		}
	}
	out := filepath.Join(tmp, "image")
	created := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	o := Options{
		Operator: filepath.Join(tmp, "podium-operator"), CLI: filepath.Join(tmp, "podium"),
		Out: out, Archive: filepath.Join(tmp, "image.oci.tar"),
		Ref: "podium:test", Version: "v9.9.9", Revision: "abc123", Arch: "amd64", Created: created,
	}
	digest, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	if again != digest {
		t.Errorf("the same inputs gave two images: %s and %s", digest, again)
	}

	var layoutFile struct {
		Version string `json:"imageLayoutVersion"`
	}
	readJSON(t, filepath.Join(out, "oci-layout"), &layoutFile)
	if layoutFile.Version != "1.0.0" {
		t.Errorf("oci-layout version %q", layoutFile.Version)
	}
	var index struct {
		Manifests []descriptor `json:"manifests"`
	}
	readJSON(t, filepath.Join(out, "index.json"), &index)
	if len(index.Manifests) != 1 || index.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "podium:test" {
		t.Fatalf("index: %+v", index)
	}
	if index.Manifests[0].Digest != digest.String() {
		t.Errorf("index names %s, Build returned %s", index.Manifests[0].Digest, digest)
	}
	var manifest struct {
		MediaType string       `json:"mediaType"`
		Config    descriptor   `json:"config"`
		Layers    []descriptor `json:"layers"`
	}
	if err := json.Unmarshal(blob(t, out, index.Manifests[0]), &manifest); err != nil {
		t.Fatal(err)
	}
	if manifest.MediaType != "application/vnd.oci.image.manifest.v1+json" || manifest.Config.MediaType != "application/vnd.oci.image.config.v1+json" {
		t.Errorf("media types: manifest %q, config %q", manifest.MediaType, manifest.Config.MediaType)
	}
	var config struct {
		OS           string `json:"os"`
		Architecture string `json:"architecture"`
		Config       struct {
			User       string            `json:"User"`
			Entrypoint []string          `json:"Entrypoint"`
			Labels     map[string]string `json:"Labels"`
		} `json:"config"`
	}
	if err := json.Unmarshal(blob(t, out, manifest.Config), &config); err != nil {
		t.Fatal(err)
	}
	if config.OS != "linux" || config.Architecture != "amd64" || config.Config.User != "65532:65532" ||
		strings.Join(config.Config.Entrypoint, " ") != "/podium-operator" {
		t.Errorf("config: %+v", config)
	}
	for k, v := range map[string]string{
		"org.opencontainers.image.title": "podium-operator", "org.opencontainers.image.version": "v9.9.9",
		"org.opencontainers.image.revision": "abc123", "org.opencontainers.image.created": "2026-11-01T00:00:00Z",
	} {
		if config.Config.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, config.Config.Labels[k], v)
		}
	}

	rootfs := filepath.Join(tmp, "rootfs")
	for _, l := range manifest.Layers {
		if l.MediaType != "application/vnd.oci.image.layer.v1.tar+gzip" {
			t.Errorf("layer media type %q", l.MediaType)
		}
		unpack(t, blob(t, out, l), rootfs)
	}
	passwd, err := os.ReadFile(filepath.Join(rootfs, "etc", "passwd"))
	if err != nil || !strings.Contains(string(passwd), "nonroot:x:65532:65532:") {
		t.Errorf("/etc/passwd has no nonroot user: %v %s", err, passwd)
	}
	for _, name := range []string{"podium-operator", "podium"} {
		if fi, err := os.Stat(filepath.Join(rootfs, name)); err != nil || fi.Mode().Perm()&0o111 == 0 {
			t.Errorf("/%s is not an executable in the image: %v", name, err)
		}
	}
	if fi, err := os.Stat(filepath.Join(rootfs, "tmp")); err != nil || fi.Mode()&os.ModeSticky == 0 {
		t.Errorf("/tmp is not a sticky directory: %v", err)
	}

	cmd := exec.Command(filepath.Join(rootfs, "podium-operator"), "--help")
	if os.Geteuid() == 0 {
		// As the runtime would: the image's file system as /, the image's user.
		cmd = exec.Command("/podium-operator", "--help")
		cmd.Dir = "/"
		cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: rootfs, Credential: &syscall.Credential{Uid: 65532, Gid: 65532}}
	}
	cmd.Env = []string{}
	help, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("podium-operator --help from the image: %v\n%s", err, help)
	}
	for _, flag := range []string{"-metrics-bind-address", "-metrics-secure", "-http-addr", "-leader-elect"} {
		if !strings.Contains(string(help), flag) {
			t.Errorf("--help does not mention %s:\n%s", flag, help)
		}
	}

	arch, err := os.Open(o.Archive)
	if err != nil {
		t.Fatal(err)
	}
	defer arch.Close()
	names := map[string]bool{}
	tr := tar.NewReader(arch)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names[h.Name] = true
	}
	for _, want := range []string{"oci-layout", "index.json", "blobs/sha256/" + strings.TrimPrefix(digest.String(), "sha256:")} {
		if !names[want] {
			t.Errorf("the oci-archive has no %s", want)
		}
	}
}

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations"`
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// blob reads a blob of the layout and checks its size and digest.
func blob(t *testing.T, layout string, d descriptor) []byte {
	t.Helper()
	hexDigest, ok := strings.CutPrefix(d.Digest, "sha256:")
	if !ok {
		t.Fatalf("digest %q is not sha256", d.Digest)
	}
	b, err := os.ReadFile(filepath.Join(layout, "blobs", "sha256", hexDigest))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	if hex.EncodeToString(sum[:]) != hexDigest || int64(len(b)) != d.Size {
		t.Fatalf("blob %s does not match its descriptor (size %d, want %d)", d.Digest, len(b), d.Size)
	}
	return b
}

func unpack(t *testing.T, layer []byte, dir string) {
	t.Helper()
	zr, err := gzip.NewReader(strings.NewReader(string(layer)))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, filepath.Clean("/"+h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(path, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, os.FileMode(h.Mode&0o777)|modeBits(h.Mode)); err != nil {
				t.Fatal(err)
			}
			_ = os.Lchown(path, h.Uid, h.Gid) // root only; the test checks no ownership
		case tar.TypeReg:
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, data, os.FileMode(h.Mode&0o777)); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("unexpected entry %s of type %c", h.Name, h.Typeflag)
		}
	}
}

func modeBits(m int64) os.FileMode {
	if m&0o1000 != 0 {
		return os.ModeSticky
	}
	return 0
}

// TestToolImage checks --tool: one binary, its entrypoint, the same user and files, no
// operator and no ports (the e2e node's pause and Job images are made this way).
func TestToolImage(t *testing.T) {
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "envsha")
	if err := os.WriteFile(bin, []byte("#!/bin/false\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "image")
	digest, err := Build(Options{
		Tool: &Tool{Name: "envsha", Binary: bin}, Out: out, Ref: "podium-e2e/envsha:e2e",
		Arch: "amd64", Created: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
	})
	if err != nil {
		t.Fatal(err)
	}
	var index struct {
		Manifests []descriptor `json:"manifests"`
	}
	readJSON(t, filepath.Join(out, "index.json"), &index)
	if len(index.Manifests) != 1 || index.Manifests[0].Digest != digest.String() {
		t.Fatalf("index: %+v, Build returned %s", index, digest)
	}
	var manifest struct {
		Config descriptor   `json:"config"`
		Layers []descriptor `json:"layers"`
	}
	if err := json.Unmarshal(blob(t, out, index.Manifests[0]), &manifest); err != nil {
		t.Fatal(err)
	}
	var config struct {
		Config struct {
			User         string              `json:"User"`
			Entrypoint   []string            `json:"Entrypoint"`
			ExposedPorts map[string]struct{} `json:"ExposedPorts"`
			Labels       map[string]string   `json:"Labels"`
		} `json:"config"`
	}
	if err := json.Unmarshal(blob(t, out, manifest.Config), &config); err != nil {
		t.Fatal(err)
	}
	if strings.Join(config.Config.Entrypoint, " ") != "/envsha" || config.Config.User != "65532:65532" ||
		len(config.Config.ExposedPorts) != 0 || config.Config.Labels["org.opencontainers.image.title"] != "envsha" {
		t.Errorf("config: %+v", config)
	}
	rootfs := filepath.Join(tmp, "rootfs")
	for _, l := range manifest.Layers {
		unpack(t, blob(t, out, l), rootfs)
	}
	if b, err := os.ReadFile(filepath.Join(rootfs, "envsha")); err != nil || string(b) != "#!/bin/false\n" {
		t.Errorf("/envsha: %v %q", err, b)
	}
	for _, absent := range []string{"podium-operator", "podium"} {
		if _, err := os.Stat(filepath.Join(rootfs, absent)); err == nil {
			t.Errorf("/%s is in a tool image", absent)
		}
	}
	if _, err := os.Stat(filepath.Join(rootfs, "etc", "passwd")); err != nil {
		t.Errorf("no /etc/passwd: %v", err)
	}
}
