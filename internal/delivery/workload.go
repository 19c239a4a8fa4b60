package delivery

import (
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// WorkloadControllers are the users kube-controller-manager creates Pods and workloads
// as: with --use-service-account-credentials one ServiceAccount per controller, without
// it system:kube-controller-manager. They copy what they create from a template
// admission already saw (docs/secrets.md, "Who the requester is"), so what admission
// recorded on that template holds for what they create. The run Secret admission
// policies (config/admission) exempt these users: internal/admissiongen writes them
// from this list.
var WorkloadControllers = []string{
	ControllerManagerUser,
	"system:serviceaccount:kube-system:cronjob-controller",
	DaemonSetControllerUser,
	"system:serviceaccount:kube-system:deployment-controller",
	JobControllerUser,
	"system:serviceaccount:kube-system:replicaset-controller",
	"system:serviceaccount:kube-system:replication-controller",
	StatefulSetControllerUser,
}

// The two controllers of kube-controller-manager that write ControllerRevisions.
const (
	DaemonSetControllerUser   = "system:serviceaccount:kube-system:daemon-set-controller"
	StatefulSetControllerUser = "system:serviceaccount:kube-system:statefulset-controller"
)

// RevisionControllers are the workload controllers that write ControllerRevisions
// (the admission policy podium-controller-revisions exempts them).
var RevisionControllers = []string{ControllerManagerUser, DaemonSetControllerUser, StatefulSetControllerUser}

// IsWorkloadController says whether user is one of WorkloadControllers.
func IsWorkloadController(user string) bool { return slices.Contains(WorkloadControllers, user) }

// Kinds admission sees. A Job or a Pod is a run: it gets its run Secret where it is
// created. The other kinds hold a pod template their controller makes Pods (a CronJob:
// Jobs) from: admission records their requester on the template, and delivery happens
// when the controller creates the Pod or Job.
const (
	KindCronJob               = "CronJob"
	KindDeployment            = "Deployment"
	KindReplicaSet            = "ReplicaSet"
	KindStatefulSet           = "StatefulSet"
	KindDaemonSet             = "DaemonSet"
	KindReplicationController = "ReplicationController"
	KindPodTemplate           = "PodTemplate"
)

// kindOf is what admission knows of a resource: its kind and how to read the parts of
// one of its objects.
type kindOf struct {
	kind  string
	new   func() runtime.Object
	parts func(runtime.Object) (meta *metav1.ObjectMeta, templates []*metav1.ObjectMeta, spec *corev1.PodSpec)
	// templatePaths and specPath are where, as JSON pointers, the parts lie: each
	// template's metadata (in the order of parts), and the pod spec.
	templatePaths []string
	specPath      string
}

var workloadKinds = map[metav1.GroupVersionResource]kindOf{
	{Group: "batch", Version: "v1", Resource: "jobs"}: {KindJob, func() runtime.Object { return &batchv1.Job{} },
		func(o runtime.Object) (*metav1.ObjectMeta, []*metav1.ObjectMeta, *corev1.PodSpec) {
			j := o.(*batchv1.Job)
			return &j.ObjectMeta, []*metav1.ObjectMeta{&j.Spec.Template.ObjectMeta}, &j.Spec.Template.Spec
		}, []string{"/spec/template/metadata"}, "/spec/template/spec"},
	{Version: "v1", Resource: "pods"}: {KindPod, func() runtime.Object { return &corev1.Pod{} },
		func(o runtime.Object) (*metav1.ObjectMeta, []*metav1.ObjectMeta, *corev1.PodSpec) {
			p := o.(*corev1.Pod)
			return &p.ObjectMeta, nil, &p.Spec
		}, nil, "/spec"},
	{Group: "batch", Version: "v1", Resource: "cronjobs"}: {KindCronJob, func() runtime.Object { return &batchv1.CronJob{} },
		func(o runtime.Object) (*metav1.ObjectMeta, []*metav1.ObjectMeta, *corev1.PodSpec) {
			c := o.(*batchv1.CronJob)
			jt := &c.Spec.JobTemplate
			return &c.ObjectMeta, []*metav1.ObjectMeta{&jt.ObjectMeta, &jt.Spec.Template.ObjectMeta}, &jt.Spec.Template.Spec
		}, []string{"/spec/jobTemplate/metadata", "/spec/jobTemplate/spec/template/metadata"}, "/spec/jobTemplate/spec/template/spec"},
	{Group: "apps", Version: "v1", Resource: "deployments"}: {KindDeployment, func() runtime.Object { return &appsv1.Deployment{} },
		func(o runtime.Object) (*metav1.ObjectMeta, []*metav1.ObjectMeta, *corev1.PodSpec) {
			d := o.(*appsv1.Deployment)
			return &d.ObjectMeta, []*metav1.ObjectMeta{&d.Spec.Template.ObjectMeta}, &d.Spec.Template.Spec
		}, []string{"/spec/template/metadata"}, "/spec/template/spec"},
	{Group: "apps", Version: "v1", Resource: "replicasets"}: {KindReplicaSet, func() runtime.Object { return &appsv1.ReplicaSet{} },
		func(o runtime.Object) (*metav1.ObjectMeta, []*metav1.ObjectMeta, *corev1.PodSpec) {
			r := o.(*appsv1.ReplicaSet)
			return &r.ObjectMeta, []*metav1.ObjectMeta{&r.Spec.Template.ObjectMeta}, &r.Spec.Template.Spec
		}, []string{"/spec/template/metadata"}, "/spec/template/spec"},
	{Group: "apps", Version: "v1", Resource: "statefulsets"}: {KindStatefulSet, func() runtime.Object { return &appsv1.StatefulSet{} },
		func(o runtime.Object) (*metav1.ObjectMeta, []*metav1.ObjectMeta, *corev1.PodSpec) {
			s := o.(*appsv1.StatefulSet)
			return &s.ObjectMeta, []*metav1.ObjectMeta{&s.Spec.Template.ObjectMeta}, &s.Spec.Template.Spec
		}, []string{"/spec/template/metadata"}, "/spec/template/spec"},
	{Group: "apps", Version: "v1", Resource: "daemonsets"}: {KindDaemonSet, func() runtime.Object { return &appsv1.DaemonSet{} },
		func(o runtime.Object) (*metav1.ObjectMeta, []*metav1.ObjectMeta, *corev1.PodSpec) {
			d := o.(*appsv1.DaemonSet)
			return &d.ObjectMeta, []*metav1.ObjectMeta{&d.Spec.Template.ObjectMeta}, &d.Spec.Template.Spec
		}, []string{"/spec/template/metadata"}, "/spec/template/spec"},
	{Version: "v1", Resource: "replicationcontrollers"}: {KindReplicationController, func() runtime.Object { return &corev1.ReplicationController{} },
		func(o runtime.Object) (*metav1.ObjectMeta, []*metav1.ObjectMeta, *corev1.PodSpec) {
			r := o.(*corev1.ReplicationController)
			if r.Spec.Template == nil {
				return &r.ObjectMeta, nil, nil
			}
			return &r.ObjectMeta, []*metav1.ObjectMeta{&r.Spec.Template.ObjectMeta}, &r.Spec.Template.Spec
		}, []string{"/spec/template/metadata"}, "/spec/template/spec"},
	{Version: "v1", Resource: "podtemplates"}: {KindPodTemplate, func() runtime.Object { return &corev1.PodTemplate{} },
		func(o runtime.Object) (*metav1.ObjectMeta, []*metav1.ObjectMeta, *corev1.PodSpec) {
			t := o.(*corev1.PodTemplate)
			return &t.ObjectMeta, []*metav1.ObjectMeta{&t.Template.ObjectMeta}, &t.Template.Spec
		}, []string{"/template/metadata"}, "/template/spec"},
}

// isRun says whether kind gets its own run Secret (a Job or a Pod).
func isRun(kind string) bool { return kind == KindJob || kind == KindPod }

// templateChanged says whether an update changes what a template kind's controller
// makes from it: the pod template (a CronJob's job template), apart from what admission
// records on it.
func templateChanged(old, cur *run) bool {
	o, c := old.templateCopy(), cur.templateCopy()
	return !equality.Semantic.DeepEqual(o, c)
}

// templateCopy is the part of the object a controller copies, with the recorded
// annotations and labels removed.
func (r *run) templateCopy() any {
	var t any
	switch o := r.obj.(type) {
	case *batchv1.CronJob:
		t = o.Spec.JobTemplate.DeepCopy()
	case *appsv1.Deployment:
		t = o.Spec.Template.DeepCopy()
	case *appsv1.ReplicaSet:
		t = o.Spec.Template.DeepCopy()
	case *appsv1.StatefulSet:
		t = o.Spec.Template.DeepCopy()
	case *appsv1.DaemonSet:
		t = o.Spec.Template.DeepCopy()
	case *corev1.ReplicationController:
		if o.Spec.Template == nil {
			return nil
		}
		t = o.Spec.Template.DeepCopy()
	case *corev1.PodTemplate:
		t = o.Template.DeepCopy()
	default:
		return nil
	}
	cp := &run{}
	switch x := t.(type) {
	case *batchv1.JobTemplateSpec:
		cp.meta, cp.templates = &x.ObjectMeta, []*metav1.ObjectMeta{&x.Spec.Template.ObjectMeta}
	case *corev1.PodTemplateSpec:
		cp.meta = &x.ObjectMeta
	}
	cp.forget()
	return t
}
