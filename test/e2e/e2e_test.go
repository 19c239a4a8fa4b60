//go:build e2e

// Package e2e_test checks Podium as a platform team runs it: installed with
// `kubectl apply --server-side -f dist/install.yaml` on a real single-node cluster (the
// node hack/e2e/node runs: kubelet, containerd, a CNI bridge, kube-proxy), from the image
// `make image` assembles. `make e2e` starts the node, runs this package and stops the
// node (docs/development.md, "The e2e node"). It is behind the e2e build tag so that
// `go test ./...` (make test) does not run it.
package e2e_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"podium.dev/podium/internal/origin"
	"podium.dev/podium/internal/testenv"
)

const (
	system = "podium-system"
	// leaseName is the operator's leader election lease (internal/operator).
	leaseName = "podium-operator.hub.podium.dev"
	// jobImage prints the SHA-256 of the variables it is given (hack/e2e/envsha); make e2e
	// imports it into the node's containerd.
	jobImage = "podium-e2e/envsha:e2e"
	org      = "e2e-acme"
)

var (
	ctx        context.Context
	cancel     context.CancelFunc
	cfg        *rest.Config
	cs         kubernetes.Interface
	kubeconfig string
	kubectl    string
	// base is the operator's HTTP API (secrets, API keys) as the podium Service's
	// ClusterIP serves it; readBase the read tier's (the public read, web pages,
	// preflight) as the podium-read Service's. do sends each path to its own, as an
	// Ingress in front of both does (docs/deploy.md, "Components").
	base, readBase string
)

// grantJobs gives ServiceAccount ns/sa the verbs on Jobs in ns (Role run-submitter, bound
// as runner-jobs): what a platform team grants for runs.
func grantJobs(ns, sa string, verbs ...string) {
	GinkgoHelper()
	_, err := cs.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "run-submitter", Namespace: ns},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: verbs}},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	_, err = cs.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "runner-jobs", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "run-submitter"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: ns}},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
}

// baseFor is the Service that serves path: the operator's for the paths internal/origin
// sends to it, the read tier's for every other.
func baseFor(path string) string {
	p, _, _ := strings.Cut(path, "?")
	if origin.ToOperator(p) {
		return base
	}
	return readBase
}

// serviceBase is the http://ClusterIP:port of Service name in podium-system: from this
// machine, kube-proxy's rules (the OUTPUT chain) send it to a ready replica, as they do
// for a Pod of the cluster.
func serviceBase(name string) string {
	GinkgoHelper()
	svc, err := cs.CoreV1().Services(system).Get(ctx, name, metav1.GetOptions{})
	Expect(err).NotTo(HaveOccurred())
	Expect(svc.Spec.ClusterIP).NotTo(BeEmpty())
	return fmt.Sprintf("http://%s:%d", svc.Spec.ClusterIP, svc.Spec.Ports[0].Port)
}

// canI is kubectl auth can-i's answer (yes or no; it exits 1 for no).
func canI(args ...string) string {
	GinkgoHelper()
	cmd := exec.Command(kubectl, append([]string{"auth", "can-i"}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	// The answer is on stdout; kubectl's warnings (a cluster-scoped resource asked about
	// in the kubeconfig's namespace) go to stderr and are not part of it. can-i exits 1
	// for "no", so its error is not a failure here.
	out, _ := cmd.Output()
	return strings.TrimSpace(string(out))
}

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "E2E Suite")
}

var _ = BeforeSuite(func() {
	dir := os.Getenv("PODIUM_E2E_DIR")
	Expect(dir).NotTo(BeEmpty(), "run with make e2e (PODIUM_E2E_DIR is the node's directory)")
	kubectl = os.Getenv("KUBECTL")
	Expect(kubectl).NotTo(BeEmpty(), "KUBECTL is the pinned kubectl")
	kubeconfig = filepath.Join(dir, "kubeconfig")
	ctx, cancel = context.WithCancel(context.Background())
	var err error
	cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	cs, err = kubernetes.NewForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())
	SetDefaultEventuallyTimeout(3 * time.Minute)
	SetDefaultEventuallyPollingInterval(500 * time.Millisecond)
})

var _ = AfterSuite(func() {
	if cancel != nil {
		cancel()
	}
})

// run runs kubectl against the node as its admin, the way docs/deploy.md tells users.
func run(stdin string, args ...string) string {
	GinkgoHelper()
	cmd := exec.Command(kubectl, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "kubectl %s:\n%s", strings.Join(args, " "), out)
	return string(out)
}

func operatorPods() []corev1.Pod { return podsOf("operator") }

// podsOf are the Pods of a workload: component operator or read.
func podsOf(component string) []corev1.Pod {
	GinkgoHelper()
	pods, err := cs.CoreV1().Pods(system).List(ctx, metav1.ListOptions{
		LabelSelector: "app.kubernetes.io/name=podium,app.kubernetes.io/component=" + component,
	})
	Expect(err).NotTo(HaveOccurred())
	return pods.Items
}

func ready(p corev1.Pod) bool {
	if p.DeletionTimestamp != nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// leader is the Pod holding the leader lease: controller-runtime's identity is the
// hostname (the Pod's name), "_", a UUID.
func leader(g Gomega) string {
	lease, err := cs.CoordinationV1().Leases(system).Get(ctx, leaseName, metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(lease.Spec.HolderIdentity).NotTo(BeNil())
	name, _, ok := strings.Cut(*lease.Spec.HolderIdentity, "_")
	g.Expect(ok).To(BeTrue(), "holder identity %q", *lease.Spec.HolderIdentity)
	return name
}

func holder(l *coordinationv1.Lease) string {
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// newClient is an HTTP client that opens a connection per request, so that each request
// goes through kube-proxy's choice of an endpoint, as a new user would.
func newClient() *http.Client {
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
}

func do(c *http.Client, method, path, token string, body any) (int, []byte, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, baseFor(path)+path, r)
	if err != nil {
		return 0, nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

const boardPath = "/v1/leaderboards/" + org + "/bench/main?page=1&page_size=50"

const boardYAML = `apiVersion: v1
kind: Namespace
metadata:
  name: ` + org + `
---
apiVersion: hub.podium.dev/v1alpha1
kind: Dataset
metadata:
  name: bench
  namespace: ` + org + `
spec:
  title: Bench
  versions:
  - id: 0b6f4a52-8d0b-4c3e-9a55-0c2b7d1e4f10
    tag: "1.0"
    createdAt: "2026-03-01T00:00:00Z"
    tasks:
    - name: hello-world
---
apiVersion: hub.podium.dev/v1alpha1
kind: Leaderboard
metadata:
  name: bench-main
  namespace: ` + org + `
spec:
  package: ` + org + `/bench
  name: main
  title: Bench
  visibility: public
  datasetVersionRefs: ["latest"]
  metadataSchema:
    type: object
    required: [agent]
    properties:
      agent: {type: string}
  metricsSchema:
    type: object
    required: [reward]
    properties:
      reward: {type: number, minimum: 0, maximum: 1}
  columns:
  - {id: agent, header: Agent, accessor: metadata.agent, type: text}
  - {id: reward, header: Reward, accessor: metrics.reward, type: number}
  rankBy:
  - {accessor: metrics.reward, direction: desc}
---
apiVersion: hub.podium.dev/v1alpha1
kind: LeaderboardRow
metadata:
  name: main-terminus
  namespace: ` + org + `
spec:
  leaderboard: bench-main
  metadata: {agent: terminus}
  metrics: {reward: 0.82}
---
apiVersion: hub.podium.dev/v1alpha1
kind: LeaderboardRow
metadata:
  name: main-aider
  namespace: ` + org + `
spec:
  leaderboard: bench-main
  metadata: {agent: aider}
  metrics: {reward: 0.65}
`

var _ = Describe("Podium on a real node", Ordered, func() {
	It("installs from dist/install.yaml as docs/deploy.md says, and both replicas become Ready", func() {
		install := filepath.Join(testenv.RepoRoot(), "dist", "install.yaml")
		By("kubectl apply --server-side -f dist/install.yaml")
		run("", "apply", "--server-side", "-f", install)
		By("kubectl -n podium-system rollout status deployment/podium-operator")
		run("", "-n", system, "rollout", "status", "deployment/podium-operator", "--timeout=5m")
		By("kubectl -n podium-system rollout status deployment/podium-read")
		run("", "-n", system, "rollout", "status", "deployment/podium-read", "--timeout=5m")

		// Both workloads, two replicas each, from the one image make image assembled, run
		// as its non-root user.
		for _, component := range []string{"operator", "read"} {
			dep, err := cs.AppsV1().Deployments(system).Get(ctx, "podium-"+component, metav1.GetOptions{})
			Expect(err).NotTo(HaveOccurred())
			Expect(dep.Spec.Replicas).To(HaveValue(Equal(int32(2))))
			Eventually(func(g Gomega) {
				var names []string
				for _, p := range podsOf(component) {
					if ready(p) {
						names = append(names, p.Name)
					}
				}
				g.Expect(names).To(HaveLen(2), "ready %s replicas", component)
			}).Should(Succeed())
			for _, p := range podsOf(component) {
				Expect(p.Spec.Containers[0].Image).To(Equal("podium:dev"))
				Expect(p.Status.ContainerStatuses).To(HaveLen(1))
				Expect(p.Status.ContainerStatuses[0].RestartCount).To(BeZero(), "pod %s restarted", p.Name)
			}
		}
	})

	It("gives the read tier no right on Secrets and none to write (kubectl auth can-i)", func() {
		const as = "--as=system:serviceaccount:" + system + ":podium-read"
		for _, args := range [][]string{
			{"get", "secrets", "-n", system},
			{"get", "secrets", "-n", org},
			{"list", "secrets", "--all-namespaces"},
			{"watch", "secrets", "--all-namespaces"},
			{"create", "leaderboardrows.hub.podium.dev", "-n", org},
			{"update", "leaderboards.hub.podium.dev", "-n", org},
			{"delete", "hostedsecrets.hub.podium.dev", "-n", org},
			{"create", "pods", "-n", org},
		} {
			Expect(canI(append(args, as)...)).To(Equal("no"), "kubectl auth can-i %v %s", args, as)
		}
		for _, args := range [][]string{
			{"list", "leaderboardrows.hub.podium.dev", "--all-namespaces"},
			{"watch", "hostedsecrets.hub.podium.dev", "--all-namespaces"},
			{"create", "tokenreviews.authentication.k8s.io"},
			{"create", "subjectaccessreviews.authorization.k8s.io"},
		} {
			Expect(canI(append(args, as)...)).To(Equal("yes"), "kubectl auth can-i %v %s", args, as)
		}
	})

	It("has one replica holding the leader lease", func() {
		pods := map[string]bool{}
		for _, p := range operatorPods() {
			pods[p.Name] = true
		}
		Eventually(func(g Gomega) {
			g.Expect(pods).To(HaveKey(leader(g)))
		}).Should(Succeed())
	})

	It("answers the public read through the read tier's Service, not the operator's", func() {
		base, readBase = serviceBase("podium"), serviceBase("podium-read")

		run(boardYAML, "apply", "--server-side", "-f", "-")
		run("", "-n", org, "wait", "--for=condition=Ready", "leaderboard/bench-main", "--timeout=2m")
		c := newClient()
		// Both replicas serve it once their caches have the rows (each request may reach
		// either one).
		Eventually(func(g Gomega) {
			for range 6 {
				code, body, err := do(c, http.MethodGet, boardPath, "", nil)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(code).To(Equal(http.StatusOK), "%s", body)
				g.Expect(string(body)).To(ContainSubstring(`"terminus"`))
				g.Expect(string(body)).To(ContainSubstring(`"aider"`))
			}
		}).Should(Succeed())
		// The operator leaves the public read to the read tier.
		resp, err := c.Get(base + boardPath)
		Expect(err).NotTo(HaveOccurred())
		resp.Body.Close()
		Expect(resp.StatusCode).To(Equal(http.StatusNotFound), "the operator's Service served the public read")
	})

	It("hands the lease over when the leader's Pod is killed, and the read never stops answering", func() {
		old := leader(Default)
		lease, err := cs.CoordinationV1().Leases(system).Get(ctx, leaseName, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		oldHolder := holder(lease)

		var (
			mu       sync.Mutex
			requests int
			failures []string
		)
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer GinkgoRecover()
			defer close(done)
			c := newClient()
			for {
				select {
				case <-stop:
					return
				case <-time.After(100 * time.Millisecond):
				}
				code, body, err := do(c, http.MethodGet, boardPath, "", nil)
				mu.Lock()
				requests++
				switch {
				case err != nil:
					failures = append(failures, time.Now().Format("15:04:05.000")+" "+err.Error())
				case code != http.StatusOK || !bytes.Contains(body, []byte(`"terminus"`)):
					failures = append(failures, fmt.Sprintf("%s %d %.200s", time.Now().Format("15:04:05.000"), code, body))
				}
				mu.Unlock()
			}
		}()
		time.Sleep(time.Second)

		By("deleting the leader's Pod " + old)
		Expect(cs.CoreV1().Pods(system).Delete(ctx, old, metav1.DeleteOptions{})).To(Succeed())
		start := time.Now()
		var newLeader string
		Eventually(func(g Gomega) {
			l, err := cs.CoordinationV1().Leases(system).Get(ctx, leaseName, metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(holder(l)).NotTo(Equal(oldHolder))
			newLeader = leader(g)
			g.Expect(newLeader).NotTo(Equal(old))
		}).Should(Succeed())
		GinkgoWriter.Printf("lease handed from %s to %s in %s\n", old, newLeader, time.Since(start).Round(100*time.Millisecond))

		By("waiting for the Deployment to have two ready replicas again")
		Eventually(func(g Gomega) {
			var names []string
			for _, p := range operatorPods() {
				g.Expect(p.Name).NotTo(Equal(old))
				if ready(p) {
					names = append(names, p.Name)
				}
			}
			g.Expect(names).To(HaveLen(2))
			dep, err := cs.AppsV1().Deployments(system).Get(ctx, "podium-operator", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(dep.Status.ReadyReplicas).To(Equal(int32(2)))
		}).Should(Succeed())
		// A few more reads with the replacement serving.
		time.Sleep(2 * time.Second)
		close(stop)
		<-done
		mu.Lock()
		defer mu.Unlock()
		GinkgoWriter.Printf("%d reads during the handover, %d failed\n", requests, len(failures))
		Expect(requests).To(BeNumerically(">", 50))
		Expect(failures).To(BeEmpty())
	})

	It("delivers a hosted secret stored over HTTP to a Job that asks for it by annotation", func() {
		const ns, sa, envVar = "e2e-runs", "runner", "E2E_API_KEY"
		_, err := cs.CoreV1().Namespaces().Create(ctx, orgNamespace(ns), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		// The org owner role (Podium's kinds) and what a platform team grants for runs.
		grantJobs(ns, sa, "get", "list", "create")
		token, err := testenv.ServiceAccountToken(ctx, cs, ns, sa, "podium-org-owner")
		Expect(err).NotTo(HaveOccurred())

		raw := make([]byte, 24)
		_, err = rand.Read(raw)
		Expect(err).NotTo(HaveOccurred())
		value := "sk-e2e-" + hex.EncodeToString(raw)
		sum := sha256.Sum256([]byte(value))
		want := fmt.Sprintf("%s sha256:%x", envVar, sum)

		By("storing the key over HTTP through the Service")
		c := newClient()
		Eventually(func(g Gomega) {
			// The RoleBinding reaches each replica's authorizer cache within seconds.
			code, body, err := do(c, http.MethodPost, "/v1/secrets", token, map[string]string{"env_var": envVar, "value": value})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(code).To(Equal(http.StatusCreated), "%s", body)
			g.Expect(string(body)).NotTo(ContainSubstring(value))
		}).WithTimeout(time.Minute).Should(Succeed())

		By("creating a Job as the same ServiceAccount, asking for the key by annotation")
		runner := rest.AnonymousClientConfig(cfg)
		runner.BearerToken = token
		rcs, err := kubernetes.NewForConfig(runner)
		Expect(err).NotTo(HaveOccurred())
		job := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{
				Name: "eval-1", Namespace: ns,
				Annotations: map[string]string{"hub.podium.dev/secrets": envVar},
			},
			Spec: batchv1.JobSpec{
				BackoffLimit: ptr.To(int32(0)),
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{
						Name: "agent", Image: jobImage, ImagePullPolicy: corev1.PullNever,
						Args: []string{envVar},
					}},
				}},
			},
		}
		var created *batchv1.Job
		Eventually(func(g Gomega) {
			var err error
			created, err = rcs.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				created, err = rcs.BatchV1().Jobs(ns).Get(ctx, job.Name, metav1.GetOptions{})
			}
			g.Expect(err).NotTo(HaveOccurred())
		}).WithTimeout(time.Minute).Should(Succeed())
		runSecret := created.Labels["hub.podium.dev/run-secret"]
		Expect(runSecret).NotTo(BeEmpty(), "the webhook gave the Job a run Secret")
		Expect(created.Annotations).To(HaveKeyWithValue("hub.podium.dev/requester", "system:serviceaccount:"+ns+":"+sa))
		env := created.Spec.Template.Spec.Containers[0].Env
		Expect(env).To(ContainElement(HaveField("ValueFrom.SecretKeyRef.LocalObjectReference.Name", runSecret)))

		By("waiting for the Job to complete")
		Eventually(func(g Gomega) {
			j, err := cs.BatchV1().Jobs(ns).Get(ctx, job.Name, metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			for _, cond := range j.Status.Conditions {
				g.Expect(cond.Type).NotTo(Equal(batchv1.JobFailed), "the Job failed: %s", cond.Message)
			}
			g.Expect(j.Status.Succeeded).To(Equal(int32(1)))
		}).Should(Succeed())

		By("reading what the Job's Pod printed: the SHA-256 of the key it received")
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=" + job.Name})
		Expect(err).NotTo(HaveOccurred())
		Expect(pods.Items).To(HaveLen(1))
		logs, err := cs.CoreV1().Pods(ns).GetLogs(pods.Items[0].Name, &corev1.PodLogOptions{}).DoRaw(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.TrimSpace(string(logs))).To(Equal(want))

		By("last_used_at is set")
		Eventually(func(g Gomega) {
			code, body, err := do(c, http.MethodGet, "/v1/secrets", token, nil)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(code).To(Equal(http.StatusOK), "%s", body)
			var list struct {
				Secrets []struct {
					EnvVar     string  `json:"env_var"`
					LastUsedAt *string `json:"last_used_at"`
				} `json:"secrets"`
			}
			g.Expect(json.Unmarshal(body, &list)).To(Succeed())
			g.Expect(list.Secrets).To(ContainElement(And(
				HaveField("EnvVar", envVar),
				HaveField("LastUsedAt", Not(BeNil())),
			)))
		}).WithTimeout(time.Minute).Should(Succeed())

		By("the run Secret is gone once the Job finished")
		Eventually(func(g Gomega) {
			_, err := cs.CoreV1().Secrets(ns).Get(ctx, runSecret, metav1.GetOptions{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "run Secret %s: %v", runSecret, err)
		}).WithTimeout(time.Minute).Should(Succeed())
	})

	It("never starts a hostile member's Pod naming another run's Secret, and a purge empties a pending run's Secret", func() {
		const ns, envVar = "e2e-isolation", "E2E_ALICE_KEY"
		_, err := cs.CoreV1().Namespaces().Create(ctx, orgNamespace(ns), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		_, err = cs.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: "run-submitter", Namespace: ns},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"get", "list", "create"}},
				{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "create"}},
			},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		clientFor := func(sa string) (*kubernetes.Clientset, string) {
			_, err := cs.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: sa + "-runs", Namespace: ns},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "run-submitter"},
				Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: ns}},
			}, metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred())
			token, err := testenv.ServiceAccountToken(ctx, cs, ns, sa, "podium-org-member")
			Expect(err).NotTo(HaveOccurred())
			rc := rest.AnonymousClientConfig(cfg)
			rc.BearerToken = token
			k, err := kubernetes.NewForConfig(rc)
			Expect(err).NotTo(HaveOccurred())
			return k, token
		}
		alice, aliceToken := clientFor("alice")
		mallory, _ := clientFor("mallory")

		raw := make([]byte, 24)
		_, err = rand.Read(raw)
		Expect(err).NotTo(HaveOccurred())
		value := "sk-e2e-alice-" + hex.EncodeToString(raw)
		c := newClient()
		Eventually(func(g Gomega) {
			code, body, err := do(c, http.MethodPost, "/v1/secrets", aliceToken, map[string]string{"env_var": envVar, "value": value})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(code).To(Equal(http.StatusCreated), "%s", body)
		}).WithTimeout(time.Minute).Should(Succeed())

		By("alice's Job, suspended: its run is pending")
		job := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: "alice-pending", Namespace: ns, Annotations: map[string]string{"hub.podium.dev/secrets": envVar}},
			Spec: batchv1.JobSpec{
				Suspend: ptr.To(true),
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "agent", Image: jobImage, ImagePullPolicy: corev1.PullNever, Args: []string{envVar}}},
				}},
			},
		}
		var created *batchv1.Job
		Eventually(func(g Gomega) {
			var err error
			created, err = alice.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				created, err = alice.BatchV1().Jobs(ns).Get(ctx, job.Name, metav1.GetOptions{})
			}
			g.Expect(err).NotTo(HaveOccurred())
		}).WithTimeout(time.Minute).Should(Succeed())
		runSecret := created.Labels["hub.podium.dev/run-secret"]
		Expect(runSecret).To(HavePrefix("podium-run-"))

		By("mallory's Pod naming alice's run Secret is refused: it never exists, so it never starts")
		stolen := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "stolen", Namespace: ns},
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{
				Name: "agent", Image: jobImage, ImagePullPolicy: corev1.PullNever, Args: []string{envVar},
				Env: []corev1.EnvVar{{Name: envVar, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: runSecret}, Key: envVar}}}},
			}}},
		}
		Eventually(func(g Gomega) {
			_, err := mallory.CoreV1().Pods(ns).Create(ctx, stolen, metav1.CreateOptions{})
			g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
			g.Expect(err.Error()).To(ContainSubstring("podium-run-binding"))
			g.Expect(err.Error()).NotTo(ContainSubstring(value))
		}).WithTimeout(time.Minute).Should(Succeed())
		_, err = cs.CoreV1().Pods(ns).Get(ctx, "stolen", metav1.GetOptions{})
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)

		By("alice purges her key: it is gone from the pending run's Secret within seconds")
		// The operator writes the run Secret in the background once the Job is stored,
		// never at admission (docs/design/delivery.md, "When the run Secret is written"):
		// wait until it holds the key.
		Eventually(func(g Gomega) {
			s, err := cs.CoreV1().Secrets(ns).Get(ctx, runSecret, metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(s.Data).To(HaveKeyWithValue(envVar, []byte(value)))
		}).WithTimeout(time.Minute).Should(Succeed())
		code, body, err := do(c, http.MethodDelete, "/v1/secrets", aliceToken, map[string]any{"env_var": envVar, "purge": true})
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusOK), "%s", body)
		Eventually(func(g Gomega) {
			s, err := cs.CoreV1().Secrets(ns).Get(ctx, runSecret, metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(s.Data).NotTo(HaveKey(envVar))
		}).WithTimeout(10 * time.Second).Should(Succeed())
	})

	It("verifies the row a run Podium admitted writes with the CLI, and not a row from a Pod it did not admit", verifiedRowsOnARealNode)

	// Last: they delete a read replica and scale the operator to 0, and leave both as
	// they found them (survive_test.go).
	It("loses at most 0.1% of reads when a read replica is deleted under steady load", readReplicaDeletedUnderLoad)

	It("keeps answering public and private reads with the operator scaled to 0, and refuses a Job asking for a secret", operatorScaledToZero)
})

// orgNamespace is an org namespace as docs/secrets.md ("Known limits") asks platform
// teams to make them, and as config/samples/namespace_demo.yaml is: enforcing Pod
// Security baseline, so that no member's Pod reads the node's copy of delivered values.
func orgNamespace(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		"pod-security.kubernetes.io/enforce": "baseline",
	}}}
}
