package cli_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/testenv"
	"podium.dev/podium/internal/testenv/ginkgoenv"
)

var (
	cfg       *rest.Config
	k8s       client.Client
	testEnv   *envtest.Environment
	ctx       context.Context
	clientset *kubernetes.Clientset
	// endpoint is the operator's HTTP API.
	endpoint   string
	podiumBin  string
	kubeconfig string
	workDir    string
)

func TestCLI(t *testing.T) { ginkgoenv.RunSpecs(t, "CLI Suite") }

var _ = BeforeSuite(func() {
	ginkgoenv.SetEventuallyDefaults(60*time.Second, 100*time.Millisecond)

	workDir = GinkgoT().TempDir()
	// The tests run the built binary, as users do.
	podiumBin = filepath.Join(workDir, "podium")
	build := exec.Command("go", "build", "-o", podiumBin, "./cmd/podium")
	build.Dir = testenv.RepoRoot()
	out, err := build.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), string(out))

	// The real operator, in process: controllers label, validate and count rows; its
	// HTTP API serves the secrets commands.
	suite := ginkgoenv.StartSuite(testenv.SuiteOptions{Operator: true})
	ctx, testEnv, cfg, k8s, clientset = suite.Ctx, suite.Env, suite.Config, suite.Client, suite.Clientset
	endpoint = suite.Operator.BaseURL

	// A kubeconfig for an admin user of the test apiserver, as `podium` reads one.
	kubeconfig = filepath.Join(workDir, "kubeconfig")
	Expect(testenv.AdminKubeconfig(testEnv, cfg, "podium-admin", kubeconfig)).To(Succeed())
})

// result is one run of the podium binary.
type result struct {
	out, err string
	code     int
}

func (r result) String() string {
	return "exit " + string(rune('0'+r.code)) + "\nstdout:\n" + r.out + "\nstderr:\n" + r.err
}

// podium runs the binary with the suite's kubeconfig and a private config directory;
// stdin is an empty pipe (not a terminal), stdout and stderr are pipes.
func podium(home string, args ...string) result {
	GinkgoHelper()
	cmd := exec.Command(podiumBin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "XDG_CONFIG_HOME="+home, "HOME="+home)
	cmd.Dir = home
	cmd.Stdin = strings.NewReader("")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	code := exitCode(cmd.Run())
	return result{out: out.String(), err: errb.String(), code: code}
}

// exitCode is the exit status of a command that ran (0 when err is nil); any other
// error fails the test.
func exitCode(err error) int {
	GinkgoHelper()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	Expect(err).NotTo(HaveOccurred())
	return 0
}

// ok runs podium and expects success.
func ok(home string, args ...string) string {
	GinkgoHelper()
	r := podium(home, args...)
	Expect(r.code).To(Equal(0), r.String())
	return r.out
}

// newOrg creates a namespace (an org) with a dataset "bench" of two versions, and a
// home directory for the CLI's config.
func newOrg(prefix string) (org, home string) {
	GinkgoHelper()
	ns := ginkgoenv.CreateNamespace(ctx, k8s, prefix)
	ds := &hubv1alpha1.Dataset{}
	ds.Namespace, ds.Name = ns.Name, "bench"
	ds.Spec.Versions = []hubv1alpha1.DatasetVersion{
		{ID: "11111111-1111-4111-8111-111111111111", Tag: "1.0", CreatedAt: metav1.NewTime(time.Now().Add(-48 * time.Hour))},
		{ID: "22222222-2222-4222-8222-222222222222", Tag: "2.0", CreatedAt: metav1.NewTime(time.Now().Add(-24 * time.Hour))},
	}
	Expect(k8s.Create(ctx, ds)).To(Succeed())
	home = GinkgoT().TempDir()
	DeferCleanup(func() {
		_ = k8s.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns.Name}})
	})
	return ns.Name, home
}

// write writes a file under dir and returns its path.
func write(dir, name, content string) string {
	GinkgoHelper()
	p := filepath.Join(dir, name)
	Expect(os.WriteFile(p, []byte(content), 0o644)).To(Succeed())
	return p
}
