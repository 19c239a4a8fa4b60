package metrics

import (
	"context"
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// stores stands for the manager's cache: one informer store per kind.
type stores map[string]toolscache.Store

type storeInformer struct {
	cache.Informer
	store toolscache.Store
}

func (s storeInformer) GetStore() toolscache.Store { return s.store }

func (s stores) GetInformer(_ context.Context, obj client.Object, _ ...cache.InformerGetOption) (cache.Informer, error) {
	return storeInformer{store: s[fmt.Sprintf("%T", obj)]}, nil
}

func (s stores) add(obj client.Object) {
	k := fmt.Sprintf("%T", obj)
	if s[k] == nil {
		s[k] = toolscache.NewStore(toolscache.MetaNamespaceKeyFunc)
	}
	_ = s[k].Add(obj)
}

// BenchmarkCollect is one scrape of the state gauges with 100,000 rows in 20 namespaces,
// 1,000 boards and 1,000 hosted secrets in the cache.
func BenchmarkCollect(b *testing.B) {
	valid := []metav1.Condition{{Type: hubv1alpha1.ConditionValid, Status: metav1.ConditionTrue, Reason: hubv1alpha1.ReasonValuesValid}}
	s := stores{}
	for i := range 100_000 {
		r := &hubv1alpha1.LeaderboardRow{ObjectMeta: metav1.ObjectMeta{Namespace: fmt.Sprintf("org-%d", i%20), Name: fmt.Sprint(i)}}
		r.Status.Conditions = valid
		s.add(r)
	}
	for i := range 1000 {
		s.add(&hubv1alpha1.Leaderboard{ObjectMeta: metav1.ObjectMeta{Namespace: fmt.Sprintf("org-%d", i%20), Name: fmt.Sprint(i)}})
		s.add(&hubv1alpha1.HostedSecret{ObjectMeta: metav1.ObjectMeta{Namespace: fmt.Sprintf("org-%d", i%20), Name: fmt.Sprint(i)}})
		s.add(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: fmt.Sprintf("org-%d", i%20), Name: fmt.Sprint(i),
			Labels: map[string]string{hubv1alpha1.LabelRunFor: "Job"}}})
	}
	ch := make(chan prometheus.Metric, 1024)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range ch {
		}
	}()
	b.ReportAllocs()
	for b.Loop() {
		collectObjects(context.Background(), s, ch)
	}
	close(ch)
	<-done
}
