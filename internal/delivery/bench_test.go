package delivery_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/onsi/gomega"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/scheme"
	"podium.dev/podium/internal/testenv"
)

// TestMain stops the control plane a benchmark started (the ginkgo suite stops its own).
func TestMain(m *testing.M) {
	code := m.Run()
	if benchStarted {
		cancel()
		<-op.Done
		if err := testEnv.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the control plane:", err)
		}
	}
	os.Exit(code)
}

var benchStarted bool

func benchSetup(b *testing.B) {
	b.Helper()
	gomega.RegisterFailHandler(func(message string, _ ...int) { b.Fatal(message) })
	if benchStarted {
		return
	}
	ctx, cancel = context.WithCancel(context.Background())
	var err error
	if testEnv, cfg, err = testenv.Start(); err != nil {
		b.Fatal(err)
	}
	if k8sClient, err = client.New(cfg, client.Options{Scheme: scheme.Scheme}); err != nil {
		b.Fatal(err)
	}
	if clientset, err = kubernetes.NewForConfig(cfg); err != nil {
		b.Fatal(err)
	}
	if err := testenv.ApplyOrgRoles(ctx, clientset); err != nil {
		b.Fatal(err)
	}
	if err := k8sClient.Create(ctx, runSubmitterRole()); err != nil {
		b.Fatal(err)
	}
	if op, err = testenv.StartOperatorWithDelivery(ctx, cfg, 0); err != nil {
		b.Fatal(err)
	}
	benchStarted = true
}

// BenchmarkAdmission creates Jobs through the apiserver as an org member and reports the
// latency of the create call (p50, p99): a Job asking for two secrets (one stored, one
// missing: the webhook resolves both, creates the run Secret and records last_used_at)
// beside a Job that asks for nothing (never sent to the webhook).
func BenchmarkAdmission(b *testing.B) {
	benchSetup(b)
	o := newOrg("bench")
	p := newPerson(o, "runner")
	store(p, map[string]any{"env_var": "ANTHROPIC_API_KEY", "value": "sk-ant-bench-000000000000"})
	for _, tc := range []struct {
		name        string
		annotations map[string]string
	}{
		{"unannotated", nil},
		{"annotated", map[string]string{hubv1alpha1.AnnotationSecrets: "ANTHROPIC_API_KEY,OPENAI_API_KEY", hubv1alpha1.AnnotationModels: "anthropic/claude-opus-4"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			durations := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				j := job(fmt.Sprintf("%s-%d-%d", tc.name, b.N, i), tc.annotations)
				start := time.Now()
				created, err := p.CS.BatchV1().Jobs(o.Name).Create(ctx, j, metav1.CreateOptions{})
				durations = append(durations, time.Since(start))
				if err != nil {
					b.Fatal(err)
				}
				if _, ok := created.Labels[hubv1alpha1.LabelRunSecret]; ok != (tc.annotations != nil) {
					b.Fatalf("run Secret label present: %v", ok)
				}
			}
			b.StopTimer()
			p.warnings.take()
			slices.Sort(durations)
			q := func(f float64) float64 {
				return float64(durations[int(f*float64(len(durations)-1))].Microseconds()) / 1000
			}
			b.ReportMetric(q(0.5), "p50-ms")
			b.ReportMetric(q(0.99), "p99-ms")
		})
	}
}
