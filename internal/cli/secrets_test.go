package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/creack/pty"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"podium.dev/podium/internal/testenv"
)

// cliTranscript keeps every output of the secrets commands, for the leak checks.
var cliTranscript = &lockedBuffer{}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// member is an org ServiceAccount with a kubeconfig holding its token (or an exec
// plugin that prints it), as a person's kubeconfig would.
type member struct {
	user, kubeconfig, home string
}

func newMember(org, name, role string, exec bool) member {
	GinkgoHelper()
	token, err := testenv.ServiceAccountToken(ctx, clientset, org, name, role)
	Expect(err).NotTo(HaveOccurred())
	dir := GinkgoT().TempDir()
	auth := &clientcmdapi.AuthInfo{Token: token}
	if exec {
		script := filepath.Join(dir, "token-plugin")
		cred := fmt.Sprintf(`{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":%q}}`, token)
		Expect(os.WriteFile(script, []byte("#!/bin/sh\ncat <<'EOF'\n"+cred+"\nEOF\n"), 0o700)).To(Succeed())
		auth = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
			APIVersion: "client.authentication.k8s.io/v1", Command: script, InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
		}}
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["test"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos[name] = auth
	kc.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: name, Namespace: org}
	kc.CurrentContext = "test"
	path := filepath.Join(dir, "kubeconfig")
	Expect(clientcmd.WriteToFile(*kc, path)).To(Succeed())
	return member{user: "system:serviceaccount:" + org + ":" + name, kubeconfig: path, home: dir}
}

// run runs the podium binary as m with stdin (a pipe, not a terminal) and extra
// environment, Podium's endpoint in PODIUM_ENDPOINT; every output goes to the
// transcript.
func (m member) run(stdin string, env []string, args ...string) result {
	GinkgoHelper()
	cmd := exec.Command(podiumBin, args...)
	cmd.Env = append(append(os.Environ(), "PODIUM_ENDPOINT="+endpoint, "KUBECONFIG="+m.kubeconfig, "XDG_CONFIG_HOME="+m.home, "HOME="+m.home), env...)
	cmd.Dir = m.home
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.MultiWriter(&out, cliTranscript), io.MultiWriter(&errb, cliTranscript)
	code := exitCode(cmd.Run())
	return result{out: out.String(), err: errb.String(), code: code}
}

func (m member) ok(stdin string, args ...string) string {
	GinkgoHelper()
	r := m.run(stdin, nil, args...)
	Expect(r.code).To(Equal(0), r.String())
	return r.out
}

// expectNoLeak checks that no value reached any output of the CLI.
func expectNoLeak(values ...string) {
	GinkgoHelper()
	t := cliTranscript.String()
	for _, v := range values {
		Expect(t).NotTo(ContainSubstring(v[:len(v)-4]), "a value (minus its last four) in the CLI's output")
	}
}

// orgWithPeople makes an org with a member and an owner, and waits until RBAC lets the
// member list (a new RoleBinding takes a moment to reach the authorizer).
func orgWithPeople(prefix string) (org string, mem, owner member) {
	GinkgoHelper()
	ns := testenv.Namespace(prefix)
	Expect(k8s.Create(ctx, ns)).To(Succeed())
	DeferCleanup(func() { _ = k8s.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns.Name}}) })
	mem = newMember(ns.Name, "member", "podium-org-member", false)
	owner = newMember(ns.Name, "owner", "podium-org-owner", true)
	for _, p := range []member{mem, owner} {
		Eventually(func() int { return p.run("", nil, "hub", "secrets", "list", "--org", ns.Name).code }).Should(Equal(0))
	}
	return ns.Name, mem, owner
}

var _ = Describe("podium hub registry-credentials", func() {
	It("stores, lists, refuses a second one off a terminal, and supersedes with --yes", func() {
		org, mem, owner := orgWithPeople("cli-registry")
		first, second := "ghp_cli-first-token-abcd", "ghp_cli-second-token-wxyz"

		out := mem.ok(first+"\n", "hub", "registry-credentials", "add", "GHCR bot", "--registry-host", "ghcr.io", "--username", "podium-bot", "--org", org)
		Expect(out).To(MatchRegexp(`Stored registry credential "GHCR bot" \(basic\) for podium-bot@ghcr.io \(hmac-sha256:[0-9a-f]{16}, id [0-9a-f-]{36}\)`))

		By("list: a table, --no-headers, --quiet and --json")
		out = mem.ok("", "hub", "registry-credentials", "list", "--org", org)
		Expect(out).To(HavePrefix("NAME"))
		Expect(out).To(ContainSubstring("GHCR bot"))
		Expect(out).NotTo(ContainSubstring("****"), "a registry credential's list shows a fingerprint, not the end of its value")
		Expect(out).To(MatchRegexp(`hmac-sha256:[0-9a-f]{16}`))
		Expect(mem.ok("", "hub", "registry-credentials", "list", "--org", org, "--no-headers")).NotTo(ContainSubstring("NAME"))
		ids := strings.Fields(mem.ok("", "hub", "registry-credentials", "ls", "--org", org, "-q"))
		Expect(ids).To(HaveLen(1))
		var page struct {
			Items []struct {
				ID, DisplayName, Fingerprint, Status string
				Display                              string `json:"display_name"`
			}
		}
		Expect(json.Unmarshal([]byte(mem.ok("", "hub", "registry-credentials", "list", "--org", org, "--json")), &page)).To(Succeed())
		Expect(page.Items).To(HaveLen(1))
		Expect(page.Items[0].ID).To(Equal(ids[0]))
		Expect(page.Items[0].Display).To(Equal("GHCR bot"))

		By("a second add off a terminal fails, naming the active one and --yes")
		r := owner.run(second, nil, "hub", "registry-credentials", "add", "GHCR bot", "--registry-host", "ghcr.io", "--username", "podium-bot", "--org", org)
		Expect(r.code).To(Equal(1), r.String())
		Expect(r.err).To(ContainSubstring(`replacing the active registry credential "GHCR bot" ending in ****abcd (fingerprint hmac-sha256:`))
		Expect(r.err).To(ContainSubstring("needs confirmation: pass --yes"))
		Expect(r.err).To(ContainSubstring("--supersede " + ids[0]))
		Expect(r.err).To(ContainSubstring("[replacement_required]"))

		By("a member may not replace it, an owner may (exec plugin credentials)")
		r = mem.run(second, nil, "hub", "registry-credentials", "add", "GHCR bot", "--registry-host", "ghcr.io", "--username", "podium-bot", "--org", org, "--yes")
		Expect(r.code).To(Equal(1), r.String())
		Expect(r.err).To(ContainSubstring("supersede"))
		out = owner.ok(second, "hub", "registry-credentials", "add", "GHCR bot", "--registry-host", "ghcr.io", "--username", "podium-bot", "--org", org, "--yes")
		Expect(out).To(ContainSubstring(`Replaced registry credential "GHCR bot"`))
		Expect(out).NotTo(ContainSubstring("****"))

		By("--supersede with the old id is stale now")
		r = owner.run(second, nil, "hub", "registry-credentials", "add", "GHCR bot", "--registry-host", "ghcr.io", "--username", "podium-bot", "--org", org, "--supersede", ids[0])
		Expect(r.code).To(Equal(1), r.String())
		Expect(r.err).To(ContainSubstring("[replacement_stale]"))

		all := owner.ok("", "hub", "registry-credentials", "list", "--org", org, "--status", "all")
		Expect(strings.Count(all, "revoked")).To(Equal(1))
		Expect(strings.Count(all, "active")).To(Equal(1))

		By("delete, then --purge")
		Expect(owner.ok("", "hub", "registry-credentials", "delete", "GHCR bot", "--org", org)).To(ContainSubstring(`Revoked registry credential "GHCR bot" (1 record)`))
		Expect(owner.ok("", "hub", "registry-credentials", "delete", "GHCR bot", "--org", org, "--purge")).To(ContainSubstring("Purged registry credential \"GHCR bot\" (2 records)"))
		Expect(owner.ok("", "hub", "registry-credentials", "list", "--org", org, "--status", "all", "-q")).To(BeEmpty())

		By("bad input is a usage error naming the flag, before anything is sent")
		r = mem.run(first, nil, "hub", "registry-credentials", "add", "GHCR bot", "--registry-host", "https://ghcr.io", "--username", "u", "--org", org)
		Expect(r.code).To(Equal(2), r.String())
		Expect(r.err).To(ContainSubstring("--registry-host"))
		r = mem.run(first, nil, "hub", "registry-credentials", "add", "GHCR bot", "--username", "u", "--org", org)
		Expect(r.code).To(Equal(2), r.String())
		Expect(r.err).To(ContainSubstring("--registry-host is required"))
		expectNoLeak(first, second)
	})

	It("stores a Google service-account key as GAR expects it, and deletes by id", func() {
		org, mem, owner := orgWithPeople("cli-gar")
		key := `{"type": "service_account", "project_id": "p", "private_key": "-----BEGIN PRIVATE KEY-----\nsa-canary-cli-7\n-----END PRIVATE KEY-----\n", "client_email": "puller@p.iam.gserviceaccount.com"}`
		file := filepath.Join(GinkgoT().TempDir(), "key.json")
		Expect(os.WriteFile(file, []byte(key+"\n"), 0o600)).To(Succeed())

		out := mem.ok("", "hub", "registry-credentials", "add", "GAR puller", "--registry-host", "us-docker.pkg.dev", "--service-account-json", file, "--org", org)
		Expect(out).To(MatchRegexp(`Stored registry credential "GAR puller" \(gar\) for _json_key@us-docker.pkg.dev \(hmac-sha256:[0-9a-f]{16}, id [0-9a-f-]{36}\)`))
		var page struct {
			Items []struct {
				ID       string `json:"id"`
				Provider string `json:"provider"`
				Host     string `json:"registry_host"`
			}
		}
		Expect(json.Unmarshal([]byte(mem.ok("", "hub", "registry-credentials", "list", "--org", org, "--json")), &page)).To(Succeed())
		Expect(page.Items).To(ConsistOf(And(HaveField("Provider", "gar"), HaveField("Host", "us-docker.pkg.dev"))))

		By("the key from stdin, replacing by id")
		out = owner.ok(key, "hub", "registry-credentials", "add", "GAR puller", "--registry-host", "us-docker.pkg.dev", "--service-account-json", "-", "--org", org, "--supersede", page.Items[0].ID)
		Expect(out).To(ContainSubstring(`Replaced registry credential "GAR puller" (gar)`))

		By("a key and a user name together, or neither, is a usage error")
		r := mem.run("", nil, "hub", "registry-credentials", "add", "x", "--registry-host", "us-docker.pkg.dev", "--service-account-json", file, "--username", "u", "--org", org)
		Expect(r.code).To(Equal(2), r.String())
		r = mem.run("", nil, "hub", "registry-credentials", "add", "x", "--registry-host", "us-docker.pkg.dev", "--org", org)
		Expect(r.code).To(Equal(2), r.String())

		By("delete by id: that record only")
		Expect(owner.ok("", "hub", "registry-credentials", "delete", page.Items[0].ID, "--org", org, "--purge")).To(ContainSubstring("Purged registry credential " + page.Items[0].ID + " (1 record)"))
		ids := strings.Fields(owner.ok("", "hub", "registry-credentials", "list", "--org", org, "--status", "all", "-q"))
		Expect(ids).To(HaveLen(1))
		Expect(ids[0]).NotTo(Equal(page.Items[0].ID))
		expectNoLeak("sa-canary-cli-7")
	})

	It("lets exactly 20 of 22 concurrent adds through the org limit", func() {
		org, mem, _ := orgWithPeople("cli-limit")
		results := make([]result, 22)
		var wg sync.WaitGroup
		for i := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer GinkgoRecover()
				results[i] = mem.run(fmt.Sprintf("limit-token-%02d-zzzz", i), nil,
					"hub", "registry-credentials", "add", fmt.Sprintf("registry %02d", i), "--registry-host", "registry.example.com:5000", "--username", "ci", "--org", org)
			}()
		}
		wg.Wait()
		okN, limited := 0, 0
		for _, r := range results {
			switch {
			case r.code == 0:
				okN++
			case r.code == 1 && strings.Contains(r.err, "[limit_reached]"):
				limited++
			default:
				Fail("unexpected outcome: " + r.String())
			}
		}
		Expect(okN).To(Equal(20))
		Expect(limited).To(Equal(2))
		Expect(strings.Fields(mem.ok("", "hub", "registry-credentials", "list", "--org", org, "-q"))).To(HaveLen(20))
		expectNoLeak("limit-token-00-zzzz", "limit-token-21-zzzz")
	})
})

var _ = Describe("podium hub secrets", func() {
	It("adds from stdin and --from-env, lists, and deletes; --org and --job exclude each other", func() {
		org, mem, _ := orgWithPeople("cli-secrets")
		fromStdin, fromEnv := "sk-cli-stdin-value-1234", "sk-cli-env-value-5678"
		Expect(mem.ok(fromStdin+"\r\n", "hub", "secrets", "add", "OPENAI_API_KEY", "--org", org, "--provider", "openai")).To(MatchRegexp(`Stored OPENAI_API_KEY \(user, \*\*\*\*1234, id [0-9a-f-]{36}\)`))
		r := mem.run("", []string{"TASK_TOKEN=" + fromEnv}, "hub", "secrets", "add", "TASK_TOKEN", "--from-env", "--org", org)
		Expect(r.code).To(Equal(0), r.String())
		Expect(r.out).To(ContainSubstring("****5678"))

		out := mem.ok("", "hub", "secrets", "list", "--org", org)
		Expect(out).To(HavePrefix("ENV VAR"))
		Expect(out).To(ContainSubstring("OPENAI_API_KEY"))
		Expect(out).To(ContainSubstring("****1234"))
		Expect(out).To(ContainSubstring("TASK_TOKEN"))
		Expect(out).NotTo(ContainSubstring(fromEnv[:8]))

		By("no value from a flag, and --org with --job is a usage error")
		r = mem.run("", nil, "hub", "secrets", "add", "X_KEY", "--value", "oops", "--org", org)
		Expect(r.code).To(Equal(2), r.String())
		r = mem.run("v-123456789", nil, "hub", "secrets", "add", "X_KEY", "--org", org, "--job", "6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b")
		Expect(r.code).To(Equal(2), r.String())
		Expect(r.err).To(ContainSubstring("mutually exclusive"))
		r = mem.run("", nil, "hub", "secrets", "add", "EMPTY_KEY", "--org", org)
		Expect(r.code).To(Equal(2), r.String())
		Expect(r.err).To(ContainSubstring("no value on stdin"))

		By("a job-scope secret in the default org (the ServiceAccount's namespace)")
		job := "6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b"
		Expect(mem.ok("job-value-0000-9999", "hub", "secrets", "add", "JOB_KEY", "--job", job)).To(ContainSubstring("(job, ****9999"))
		Expect(mem.ok("", "hub", "secrets", "list", "--job", job, "-q")).To(HaveLen(37))

		By("--json of a list, and delete --purge")
		var page struct {
			Items []struct {
				EnvVar     string `json:"env_var"`
				ValueLast4 string `json:"value_last4"`
			}
			Pagination struct{ Total int }
		}
		Expect(json.Unmarshal([]byte(mem.ok("", "hub", "secrets", "list", "--org", org, "--json")), &page)).To(Succeed())
		Expect(page.Pagination.Total).To(Equal(3))
		Expect(mem.ok("", "hub", "secrets", "delete", "OPENAI_API_KEY", "--org", org)).To(ContainSubstring("Revoked OPENAI_API_KEY (1 record)"))
		Expect(mem.ok("", "hub", "secrets", "delete", "OPENAI_API_KEY", "--org", org, "--purge", "--json")).To(MatchJSON(`{"affected":1}`))
		Expect(mem.ok("", "hub", "secrets", "delete", "OPENAI_API_KEY", "--org", org)).To(ContainSubstring("Nothing to revoke"))
		expectNoLeak(fromStdin, fromEnv, "job-value-0000-9999")
	})

	It("prompts for the value without echo, and asks before replacing, on a terminal", func() {
		org, _, owner := orgWithPeople("cli-pty")
		first, second := "pty-first-value-0a0a", "pty-second-value-1b1b"
		// On a terminal: the value at a hidden prompt.
		out := ptyRun(owner, []ptyStep{{expect: "(input hidden): ", send: first + "\r"}}, "hub", "secrets", "add", "PTY_KEY", "--org", org)
		Expect(out).To(ContainSubstring("Stored PTY_KEY"))
		Expect(out).NotTo(ContainSubstring(first[:8]), "the typed value was echoed")

		By("a second add asks; no keeps the active one")
		out = ptyRun(owner, []ptyStep{
			{expect: "(input hidden): ", send: second + "\r"},
			{expect: "Replace the active secret ending in ****0a0a? [y/N] ", send: "n\r"},
		}, "hub", "secrets", "add", "PTY_KEY", "--org", org)
		Expect(out).To(ContainSubstring("not replaced"))
		Expect(owner.ok("", "hub", "secrets", "list", "--org", org)).To(ContainSubstring("****0a0a"))

		By("yes replaces it")
		out = ptyRun(owner, []ptyStep{
			{expect: "(input hidden): ", send: second + "\r"},
			{expect: "Replace the active secret ending in ****0a0a? [y/N] ", send: "y\r"},
		}, "hub", "secrets", "add", "PTY_KEY", "--org", org)
		Expect(out).To(ContainSubstring("Replaced PTY_KEY"))
		Expect(owner.ok("", "hub", "secrets", "list", "--org", org)).To(ContainSubstring("****1b1b"))
		expectNoLeak(first, second)
	})
})

// ptyStep waits for expect on the terminal, then types send.
type ptyStep struct{ expect, send string }

// ptyRun runs the podium binary as m on a pseudo-terminal (stdin, stdout and stderr),
// plays steps, and returns everything the terminal showed once the command exits.
func ptyRun(m member, steps []ptyStep, args ...string) string {
	GinkgoHelper()
	cmd := exec.Command(podiumBin, append(append(append([]string{}, args[:2]...), "--endpoint", endpoint), args[2:]...)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+m.kubeconfig, "XDG_CONFIG_HOME="+m.home, "HOME="+m.home)
	tty, err := pty.Start(cmd)
	Expect(err).NotTo(HaveOccurred())
	defer tty.Close()
	screen := &lockedBuffer{}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(io.MultiWriter(screen, cliTranscript), tty) // ends with EIO when the command exits
	}()
	seen := 0
	for _, s := range steps {
		Eventually(func() string { return screen.String()[seen:] }).Should(ContainSubstring(s.expect))
		seen = strings.Index(screen.String()[seen:], s.expect) + seen + len(s.expect)
		_, err := tty.Write([]byte(s.send))
		Expect(err).NotTo(HaveOccurred())
	}
	_ = cmd.Wait()
	<-copied
	return screen.String()
}
