package delivery_test

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/go-logr/logr"
	"github.com/onsi/gomega"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/testenv"
)

// TestMain stops the control plane a benchmark started (the ginkgo suite stops its own).
func TestMain(m *testing.M) {
	code := m.Run()
	if benchSuite != nil {
		if err := benchSuite.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the control plane:", err)
		}
	}
	os.Exit(code)
}

// benchSuite is the control plane and operator the benchmarks of a run share.
var benchSuite *testenv.Suite

func benchSetup(b *testing.B) {
	b.Helper()
	gomega.RegisterFailHandler(func(message string, _ ...int) { b.Fatal(message) })
	if benchSuite != nil {
		return
	}
	// The operator's logs are not part of the figures (and controller-runtime warns on
	// stderr, between a benchmark's name and its figures, when no logger is set).
	logf.SetLogger(logr.Discard())
	s, err := testenv.StartSuite(context.Background(), testenv.SuiteOptions{
		ClusterRoles: []*rbacv1.ClusterRole{runSubmitterRole()},
		Operator:     true, Delivery: true,
	})
	if err != nil {
		b.Fatal(err)
	}
	benchSuite = s
	use(s)
}

// isolationBindings are the bindings of the run isolation admission policies
// (config/admission/run_*.yaml): run isolation (run Secret reach and binding, granted
// Secrets named by Pods, run identity), grants' names, run integrity.
var isolationBindings = []string{"podium-run-isolation", "podium-granted-secrets", "podium-run-integrity"}

// setIsolation removes the run isolation policies' bindings (on false) or puts them back
// (on true), and waits until the apiserver acts accordingly for p in ns.
func setIsolation(b *testing.B, on bool, p person, ns string) {
	b.Helper()
	if on {
		if err := testenv.ApplyAdmission(ctx, cfg); err != nil {
			b.Fatal(err)
		}
	} else {
		for _, name := range isolationBindings {
			if err := k8sClient.Delete(ctx, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: name}}); client.IgnoreNotFound(err) != nil {
				b.Fatal(err)
			}
		}
	}
	// A Pod naming a run Secret not its own: refused exactly while the policies act.
	naming := pod("probe", nil)
	naming.Spec.Containers[0].Env = []corev1.EnvVar{envRefTo("podium-run-benchprobe", "X")}
	for deadline := time.Now().Add(time.Minute); ; {
		_, err := p.CS.CoreV1().Pods(ns).Create(ctx, naming, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if (err != nil) == on {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("a minute after the run isolation policies' bindings were set to %v, a Pod naming another run's Secret still gets: %v", on, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// BenchmarkAdmission creates Jobs and Pods through the apiserver as an org member and
// reports the latency of the create call (p50, p99), first without the run isolation
// policies (their bindings deleted: what delivery cost before them), then with them
// (isolation): a Job that asks for nothing (never sent to the webhook), the same Job sent
// to a webhook that only answers (startFloorWebhook: the floor of any webhook), a Pod that asks
// for nothing and names no run Secret, and a Job asking for two secrets (one stored, one
// missing: the webhook resolves both; its run Secret and last_used_at are written after
// the answer, and the next create waits, untimed, until that Secret is written and
// adopted, so no create is measured beside the previous one's background writes). The
// namespace holds grantedSecrets Secrets granted to hosted secrets under reserved names
// (podium-granted-*), adopted by their HostedSecrets, and one run Secret per delivering
// create so far: no admission cost depends on how many Secrets the namespace holds.
func BenchmarkAdmission(b *testing.B) {
	benchSetup(b)
	o := newOrg("bench")
	p := newPerson(o, "runner")
	store(p, map[string]any{"env_var": "ANTHROPIC_API_KEY", "value": "sk-ant-bench-000000000000"})
	const grantedSecrets = 5
	for i := range grantedSecrets {
		name := fmt.Sprintf("podium-granted-declared-%d", i)
		if err := k8sClient.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: o.Name, Name: name,
			Labels: map[string]string{hubv1alpha1.LabelHostedSecret: name}}, Data: map[string][]byte{"value": []byte("declared-bench-value")}}); err != nil {
			b.Fatal(err)
		}
		if err := k8sClient.Create(ctx, &hubv1alpha1.HostedSecret{ObjectMeta: metav1.ObjectMeta{Namespace: o.Name, Name: name},
			Spec: hubv1alpha1.HostedSecretSpec{Scope: hubv1alpha1.ScopeUser, Owner: p.User, EnvVar: fmt.Sprintf("DECLARED_%d", i),
				SecretRef: hubv1alpha1.SecretValueRef{Name: name}}}); err != nil {
			b.Fatal(err)
		}
	}
	adopted(b, o.Name, grantedSecrets)
	stopFloor := startFloorWebhook(b)
	defer stopFloor()
	floorJob := func(name string) *batchv1.Job {
		j := job(name, nil)
		j.Labels = map[string]string{floorLabel: "true"}
		return j
	}
	for deadline := time.Now().Add(time.Minute); ; { // until the apiserver calls it
		created, err := p.CS.BatchV1().Jobs(o.Name).Create(ctx, floorJob("floor-probe"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil && created.Labels["bench.podium.dev/floor-answered"] == "true" {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("the floor webhook was not called a minute after it was registered: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	asks := map[string]string{hubv1alpha1.AnnotationSecrets: "ANTHROPIC_API_KEY,OPENAI_API_KEY", hubv1alpha1.AnnotationModels: "anthropic/claude-opus-4"}
	cases := []benchCase{
		{"job-unannotated", nil, false, false},
		{"job-floor-webhook", nil, false, true},
		{"pod-unannotated", nil, true, false},
		{"job-delivery", asks, false, false},
	}
	create := func(b *testing.B, tc benchCase, name string) time.Duration {
		var labels map[string]string
		start := time.Now()
		var err error
		if tc.pod {
			var created *corev1.Pod
			created, err = p.CS.CoreV1().Pods(o.Name).Create(ctx, pod(name, tc.annotations), metav1.CreateOptions{})
			if err == nil {
				labels = created.Labels
			}
		} else {
			var created *batchv1.Job
			j := job(name, tc.annotations)
			if tc.floor {
				j = floorJob(name)
			}
			created, err = p.CS.BatchV1().Jobs(o.Name).Create(ctx, j, metav1.CreateOptions{})
			if err == nil {
				labels = created.Labels
			}
		}
		took := time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		if tc.floor != (labels["bench.podium.dev/floor-answered"] == "true") {
			b.Fatalf("floor webhook answer label present: %v", !tc.floor)
		}
		runSecret, ok := labels[hubv1alpha1.LabelRunSecret]
		if ok != (tc.annotations != nil) {
			b.Fatalf("run Secret label present: %v", ok)
		}
		if ok {
			// Untimed: a Job's run Secret is written after its create returned and then
			// adopted by the Job; the next create starts once that is done, as an
			// isolated create would, not beside those writes.
			settled(b, o.Name, runSecret)
		}
		return took
	}
	phases := []string{"before-isolation", "isolation"}
	// Each case in turn, N creates, with where its time went.
	for i, phase := range phases {
		setIsolation(b, i == 1, p, o.Name)
		for _, tc := range cases {
			b.Run(phase+"/"+tc.name, func(b *testing.B) {
				durations := make([]time.Duration, 0, b.N)
				resource := map[bool]string{false: "jobs", true: "pods"}[tc.pod]
				before := scrapeTotals(b, clientset, resource)
				b.ResetTimer()
				for i := range b.N {
					durations = append(durations, create(b, tc, fmt.Sprintf("%s-%s-%d-%d", phase, tc.name, b.N, i)))
				}
				b.StopTimer()
				reportBreakdown(b, before, scrapeTotals(b, clientset, resource), b.N)
				p.warnings.take()
				reportQuantiles(b, durations)
			})
		}
	}
	// The same creates interleaved, the comparison the targets are about: the phases
	// alternate interleavedRounds times and, within a phase, the cases take turns, one
	// create each, so that what drifts during a run (etcd's size, the Go heaps, the other
	// processes of the machine) weighs on every case alike.
	const interleavedRounds = 5
	durations := map[string][]time.Duration{}
	perCase, err := strconv.Atoi(cmp.Or(os.Getenv("PODIUM_BENCH_N"), "200")) // the script's N
	if err != nil {
		b.Fatal(err)
	}
	n := max(perCase/interleavedRounds, 1)
	for round := range interleavedRounds {
		for i, phase := range phases {
			setIsolation(b, i == 1, p, o.Name)
			for k := range n {
				for _, tc := range cases {
					key := phase + "/" + tc.name
					durations[key] = append(durations[key], create(b, tc, fmt.Sprintf("mix-%s-%s-%d-%d", phase, tc.name, round, k)))
				}
			}
		}
	}
	p.warnings.take()
	for _, phase := range phases {
		for _, tc := range cases {
			key := phase + "/" + tc.name
			b.Run("interleaved/"+key, func(b *testing.B) { reportQuantiles(b, durations[key]) })
		}
	}
}

// benchCase is one kind of create BenchmarkAdmission measures.
type benchCase struct {
	name        string
	annotations map[string]string
	pod         bool // a Pod, else a Job
	floor       bool // sent to the floor webhook
}

// reportQuantiles reports p50 and p99 of durations (sorted in place).
func reportQuantiles(b *testing.B, durations []time.Duration) {
	slices.Sort(durations)
	q := func(f float64) float64 {
		return float64(durations[int(f*float64(len(durations)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(q(0.5), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
}

// adopted polls until n granted Secrets of ns are adopted by their HostedSecrets (owned
// by them: the steady state), at most a minute.
func adopted(b *testing.B, ns string, n int) {
	b.Helper()
	for deadline := time.Now().Add(time.Minute); ; {
		list := &corev1.SecretList{}
		err := k8sClient.List(ctx, list, client.InNamespace(ns), client.HasLabels{hubv1alpha1.LabelHostedSecret})
		owned := 0
		for i := range list.Items {
			if len(list.Items[i].OwnerReferences) > 0 {
				owned++
			}
		}
		if err == nil && owned == n {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d granted Secrets of %s not adopted a minute after they were granted: %v", n, ns, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// settled polls until the run Secret ns/name exists and is owned by its Job (at most a
// minute).
func settled(b *testing.B, ns, name string) {
	b.Helper()
	for deadline := time.Now().Add(time.Minute); ; {
		s := &corev1.Secret{}
		err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s)
		if err == nil && len(s.OwnerReferences) > 0 {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("run Secret %s/%s not written and adopted a minute after its Job's create: %v", ns, name, err)
		}
		time.Sleep(time.Millisecond)
	}
}
