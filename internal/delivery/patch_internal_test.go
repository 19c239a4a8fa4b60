package delivery

import (
	"encoding/json"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// TestPatchOps: applied to the object as admission received it, the patch patched sends
// gives exactly the object admission left, for every kind, whether admission changed the
// object's metadata, its templates' or its pod spec; and a change elsewhere in the spec is
// left to the whole-object diff.
func TestPatchOps(t *testing.T) {
	forged := func() metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: "x", Labels: map[string]string{"app": "a", hubv1alpha1.LabelRunSecret: "podium-run-forged"},
			Annotations: map[string]string{hubv1alpha1.AnnotationRequester: "mallory", "keep": "yes"}}
	}
	spec := func() corev1.PodSpec {
		return corev1.PodSpec{InitContainers: []corev1.Container{{Name: "init", Image: "busybox"}},
			Containers: []corev1.Container{{Name: "agent", Image: "busybox", Env: []corev1.EnvVar{{Name: "KEEP", Value: "1"}}}}}
	}
	tmpl := func() corev1.PodTemplateSpec { return corev1.PodTemplateSpec{ObjectMeta: forged(), Spec: spec()} }
	objects := map[string]runtime.Object{
		"pods":                   &corev1.Pod{ObjectMeta: forged(), Spec: spec()},
		"jobs":                   &batchv1.Job{ObjectMeta: forged(), Spec: batchv1.JobSpec{Template: tmpl()}},
		"cronjobs":               &batchv1.CronJob{ObjectMeta: forged(), Spec: batchv1.CronJobSpec{JobTemplate: batchv1.JobTemplateSpec{ObjectMeta: forged(), Spec: batchv1.JobSpec{Template: tmpl()}}}},
		"deployments":            &appsv1.Deployment{ObjectMeta: forged(), Spec: appsv1.DeploymentSpec{Template: tmpl()}},
		"replicasets":            &appsv1.ReplicaSet{ObjectMeta: forged(), Spec: appsv1.ReplicaSetSpec{Template: tmpl()}},
		"statefulsets":           &appsv1.StatefulSet{ObjectMeta: forged(), Spec: appsv1.StatefulSetSpec{Template: tmpl()}},
		"daemonsets":             &appsv1.DaemonSet{ObjectMeta: forged(), Spec: appsv1.DaemonSetSpec{Template: tmpl()}},
		"replicationcontrollers": &corev1.ReplicationController{ObjectMeta: forged(), Spec: corev1.ReplicationControllerSpec{Template: &corev1.PodTemplateSpec{ObjectMeta: forged(), Spec: spec()}}},
		"podtemplates":           &corev1.PodTemplate{ObjectMeta: forged(), Template: tmpl()},
	}
	changes := []struct {
		name   string
		change func(r *run)
		diff   bool // left to the whole-object diff
	}{
		{"nothing", func(*run) {}, false},
		{"forget and record", func(r *run) { r.forget(); r.record(hubv1alpha1.AnnotationRequester, "alice") }, false},
		{"deliver env and pull secret", func(r *run) {
			r.forget()
			setMap(&r.meta.Labels, hubv1alpha1.LabelRunSecret, "podium-run-abc")
			InjectEnv(r.spec, "podium-run-abc", []string{"ANTHROPIC_API_KEY", "KEEP"})
			InjectPullSecret(r.spec, "podium-run-abc")
		}, false},
		{"labels emptied", func(r *run) { r.meta.Labels = map[string]string{} }, false},
		{"spec changed elsewhere", func(r *run) { r.spec.RestartPolicy = corev1.RestartPolicyNever }, true},
	}
	for res, obj := range objects {
		for _, c := range changes {
			t.Run(res+"/"+c.name, func(t *testing.T) {
				raw, err := json.Marshal(obj)
				if err != nil {
					t.Fatal(err)
				}
				var k kindOf
				for gvr, kk := range workloadKinds {
					if gvr.Resource == res {
						k = kk
					}
				}
				o := k.new()
				if err := json.Unmarshal(raw, o); err != nil {
					t.Fatal(err)
				}
				meta, templates, sp := k.parts(o)
				r := &run{kind: k.kind, obj: o, meta: meta, templates: templates, spec: sp, paths: k}
				r.snapshot()
				c.change(r)
				ops, ok := r.patchOps()
				if ok == c.diff {
					t.Fatalf("patchOps ok = %v, want %v", ok, !c.diff)
				}
				if !ok {
					return
				}
				ops64, err := json.Marshal(ops)
				if err != nil {
					t.Fatal(err)
				}
				p, err := jsonpatch.DecodePatch(ops64)
				if err != nil {
					t.Fatal(err)
				}
				got, err := p.Apply(raw)
				if err != nil {
					t.Fatalf("applying %s: %v", ops64, err)
				}
				gotObj := k.new()
				if err := json.Unmarshal(got, gotObj); err != nil {
					t.Fatal(err)
				}
				if !equality.Semantic.DeepEqual(gotObj, r.obj) {
					t.Errorf("patched object differs from admission's:\n got %s\nwant %s\n ops %s", got, mustJSON(t, r.obj), ops64)
				}
			})
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
