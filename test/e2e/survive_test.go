//go:build e2e

package e2e_test

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"podium.dev/podium/internal/testenv"
)

// The "survives its world" checks (issue 39): a read replica deleted under steady load,
// and the operator scaled to 0. They run last in the ordered suite and leave both
// Deployments as they found them.

// loadAvg is the machine's load average (/proc/loadavg's first three fields), printed
// beside the figures of the load test.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// readyReplicas waits until component's Deployment has want ready replicas and no Pod
// of it is terminating, and returns their names.
func readyReplicas(component string, want int) []string {
	GinkgoHelper()
	var names []string
	Eventually(func(g Gomega) {
		names = nil
		for _, p := range podsOf(component) {
			g.Expect(p.DeletionTimestamp).To(BeNil(), "pod %s is terminating", p.Name)
			if ready(p) {
				names = append(names, p.Name)
			}
		}
		g.Expect(names).To(HaveLen(want), "ready %s replicas", component)
		dep, err := cs.AppsV1().Deployments(system).Get(ctx, "podium-"+component, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(dep.Status.ReadyReplicas).To(Equal(int32(want)))
	}).Should(Succeed())
	return names
}

// readReplicaDeletedUnderLoad: four workers read the public board through the
// podium-read Service, each request on a new connection (load-balanced anew by
// kube-proxy), while one read replica is deleted with the default grace period; at most
// 0.1% of the reads may fail (a non-200 answer or a transport error).
func readReplicaDeletedUnderLoad() {
	const (
		workers = 4
		// pace spaces one worker's requests: four workers make at most ~200 requests a
		// second, few enough new connections that the client's ephemeral ports (in
		// TIME_WAIT for a minute after each) never run out.
		pace = 20 * time.Millisecond
		// before and after are the reads made before the deletion and after the
		// replacement is Ready; maxPerWorker bounds the loop whatever happens.
		before, after = 1000, 1000
		maxPerWorker  = 15000
	)
	before0 := readyReplicas("read", 2)

	var (
		total, failed atomic.Int64
		mu            sync.Mutex
		samples       []string
		wg            sync.WaitGroup
	)
	stop := make(chan struct{})
	load0 := loadAvg()
	start := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer GinkgoRecover()
			defer wg.Done()
			c := newClient()
			tick := time.NewTicker(pace)
			defer tick.Stop()
			for range maxPerWorker {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				code, body, err := do(c, http.MethodGet, boardPath, "", nil)
				total.Add(1)
				if err == nil && code == http.StatusOK {
					continue
				}
				failed.Add(1)
				msg := fmt.Sprintf("%d %.120s", code, body)
				if err != nil {
					msg = err.Error()
				}
				mu.Lock()
				if len(samples) < 20 {
					samples = append(samples, time.Now().Format("15:04:05.000")+" "+msg)
				}
				mu.Unlock()
			}
		}()
	}
	stopped := false
	stopLoad := func() {
		if !stopped {
			stopped = true
			close(stop)
			wg.Wait()
		}
	}
	defer stopLoad()

	Eventually(total.Load).Should(BeNumerically(">=", before), "reads before the deletion")
	victim := before0[0]
	By("kubectl delete pod " + victim + " (default grace) under load")
	deleted := time.Now()
	run("", "-n", system, "delete", "pod", victim, "--wait=false")
	atDelete := total.Load()

	By("waiting until it is gone and the Deployment has two ready replicas again")
	Eventually(func(g Gomega) {
		_, err := cs.CoreV1().Pods(system).Get(ctx, victim, metav1.GetOptions{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "pod %s: %v", victim, err)
	}).Should(Succeed())
	gone := time.Since(deleted)
	readyReplicas("read", 2)
	replaced := time.Since(deleted)
	atReady := total.Load()
	Eventually(total.Load).Should(BeNumerically(">=", atReady+after), "reads after the replacement is Ready")
	stopLoad()

	n, f := total.Load(), failed.Load()
	rate := float64(f) / float64(n)
	GinkgoWriter.Printf("read replica %s deleted under load: %d reads in %s (%d before the deletion, %d until the replacement was Ready), %d failed, rate %.4f%% (limit 0.1%%); pod gone after %s, replacement Ready after %s; load average %s at start, %s at end\n",
		victim, n, time.Since(start).Round(100*time.Millisecond), atDelete, atReady-atDelete, f, 100*rate,
		gone.Round(100*time.Millisecond), replaced.Round(100*time.Millisecond), load0, loadAvg())
	for _, s := range samples {
		GinkgoWriter.Println("  failed:", s)
	}
	Expect(n).To(BeNumerically(">=", before+after))
	Expect(rate).To(BeNumerically("<=", 0.001), "failed reads: %d of %d; first: %v", f, n, samples)
}

// privateBoardYAML is a private board of the e2e org beside the public one.
const privateBoardYAML = `apiVersion: hub.podium.dev/v1alpha1
kind: Leaderboard
metadata:
  name: bench-private
  namespace: ` + org + `
spec:
  package: ` + org + `/bench
  name: private
  title: Bench (private)
  visibility: private
  metricsSchema:
    type: object
    properties:
      reward: {type: number}
  rankBy:
  - {accessor: metrics.reward, direction: desc}
---
apiVersion: hub.podium.dev/v1alpha1
kind: LeaderboardRow
metadata:
  name: private-hidden
  namespace: ` + org + `
spec:
  leaderboard: bench-private
  metadata: {agent: hidden}
  metrics: {reward: 0.5}
`

const privatePath = "/v1/leaderboards/" + org + "/bench/private"

// operatorScaledToZero: with no operator Pod, the read tier still answers the public
// read and a member's read of a private board (its Kubernetes token, reviewed by the
// read tier itself), and a Job asking for a hosted secret is refused (the delivery
// webhook fails closed) while one that asks for none is admitted. Scaled back, the
// operator is Ready, holds the lease and delivers again.
func operatorScaledToZero() {
	const ns, sa, envVar = "e2e-down", "runner", "E2E_DOWN_KEY"
	c := newClient()

	By("a private board and a member of its org, read while the operator runs")
	run(privateBoardYAML, "apply", "--server-side", "-f", "-")
	run("", "-n", org, "wait", "--for=condition=Ready", "leaderboard/bench-private", "--timeout=2m")
	member, err := testenv.ServiceAccountToken(ctx, cs, org, "reader", "podium-org-member")
	Expect(err).NotTo(HaveOccurred())
	reads := func(g Gomega) {
		for range 6 {
			code, body, err := do(c, http.MethodGet, boardPath, "", nil)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(code).To(Equal(http.StatusOK), "public read: %s", body)
			g.Expect(string(body)).To(ContainSubstring(`"terminus"`))
			code, body, err = do(c, http.MethodGet, privatePath, member, nil)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(code).To(Equal(http.StatusOK), "member's private read: %s", body)
			g.Expect(string(body)).To(ContainSubstring(`"hidden"`))
			code, body, err = do(c, http.MethodGet, privatePath, "", nil)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(code).To(Equal(http.StatusNotFound), "anonymous private read: %s", body)
		}
	}
	Eventually(reads).WithTimeout(time.Minute).Should(Succeed())

	By("an org whose owner stored a hosted secret over HTTP")
	_, err = cs.CoreV1().Namespaces().Create(ctx, orgNamespace(ns), metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	grantJobs(ns, sa, "get", "list", "create", "delete")
	token, err := testenv.ServiceAccountToken(ctx, cs, ns, sa, "podium-org-owner")
	Expect(err).NotTo(HaveOccurred())
	Eventually(func(g Gomega) {
		code, body, err := do(c, http.MethodPost, "/v1/secrets", token, map[string]string{"env_var": envVar, "value": "sk-e2e-down-0123456789"})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(code).To(Equal(http.StatusCreated), "%s", body)
	}).WithTimeout(time.Minute).Should(Succeed())
	runner := rest.AnonymousClientConfig(cfg)
	runner.BearerToken = token
	rcs, err := kubernetes.NewForConfig(runner)
	Expect(err).NotTo(HaveOccurred())
	job := func(name string, annotations map[string]string) *batchv1.Job {
		// Suspended: admission is what is checked, no Pod needs to run.
		return &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: annotations},
			Spec: batchv1.JobSpec{
				Suspend: ptr.To(true),
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "agent", Image: jobImage, ImagePullPolicy: corev1.PullNever, Args: []string{envVar}}},
				}},
			},
		}
	}
	delivering := job("eval-down", map[string]string{"hub.podium.dev/secrets": envVar})

	dep, err := cs.AppsV1().Deployments(system).Get(ctx, "podium-operator", metav1.GetOptions{})
	Expect(err).NotTo(HaveOccurred())
	replicas := ptr.Deref(dep.Spec.Replicas, 1)
	Expect(replicas).To(BeNumerically(">", 0))

	By("kubectl scale deployment/podium-operator --replicas=0, until its Pods are gone")
	run("", "-n", system, "scale", "deployment/podium-operator", "--replicas=0")
	// Whatever fails below, the later checks (and a rerun) find the operator back.
	restored := false
	DeferCleanup(func() {
		if !restored {
			run("", "-n", system, "scale", "deployment/podium-operator", fmt.Sprintf("--replicas=%d", replicas))
			readyReplicas("operator", int(replicas))
		}
	})
	Eventually(func(g Gomega) {
		g.Expect(operatorPods()).To(BeEmpty())
	}).Should(Succeed())

	By("the public read and a member's private read still answer through podium-read")
	reads(Default)

	By("a Job asking for a hosted secret is refused: the webhook fails closed")
	_, err = rcs.BatchV1().Jobs(ns).Create(ctx, delivering, metav1.CreateOptions{})
	Expect(err).To(HaveOccurred(), "a Job asking for %s was admitted with no operator running", envVar)
	Expect(err.Error()).To(ContainSubstring("runs.delivery.hub.podium.dev"))
	GinkgoWriter.Printf("refused with the operator at 0 replicas: %v\n", err)
	_, err = cs.BatchV1().Jobs(ns).Get(ctx, delivering.Name, metav1.GetOptions{})
	Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)

	By("a Job asking for nothing is admitted: it is never sent to the webhook")
	_, err = rcs.BatchV1().Jobs(ns).Create(ctx, job("plain", nil), metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	Expect(rcs.BatchV1().Jobs(ns).Delete(ctx, "plain", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)})).To(Succeed())

	By(fmt.Sprintf("scaling back to %d replicas: Ready, one holds the lease, the Job is admitted", replicas))
	run("", "-n", system, "scale", "deployment/podium-operator", fmt.Sprintf("--replicas=%d", replicas))
	run("", "-n", system, "rollout", "status", "deployment/podium-operator", "--timeout=5m")
	names := readyReplicas("operator", int(replicas))
	restored = true
	Eventually(func(g Gomega) {
		g.Expect(names).To(ContainElement(leader(g)))
	}).Should(Succeed())
	var created *batchv1.Job
	Eventually(func(g Gomega) {
		var err error
		created, err = rcs.BatchV1().Jobs(ns).Create(ctx, delivering, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			created, err = rcs.BatchV1().Jobs(ns).Get(ctx, delivering.Name, metav1.GetOptions{})
		}
		g.Expect(err).NotTo(HaveOccurred())
	}).WithTimeout(time.Minute).Should(Succeed())
	Expect(created.Labels["hub.podium.dev/run-secret"]).To(HavePrefix("podium-run-"), "the webhook gave the Job a run Secret")
	Expect(rcs.BatchV1().Jobs(ns).Delete(ctx, delivering.Name, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)})).To(Succeed())
	reads(Default)
}
