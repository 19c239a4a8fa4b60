package delivery_test

import (
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/testenv"
)

// The node is the one place delivered values live outside Podium's admission: the kubelet
// and the container runtime hold every container's environment. docs/secrets.md ("Known
// limits") asks platform teams to enforce Pod Security baseline on org namespaces; the
// shipped sample does, and this is what that buys.
var _ = Describe("The sample org namespace", func() {
	It("keeps a member's Pods off the node (Pod Security baseline) and still delivers to its runs", func() {
		data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "samples", "namespace_demo.yaml"))
		Expect(err).NotTo(HaveOccurred())
		sample := &corev1.Namespace{}
		Expect(yaml.UnmarshalStrict(data, sample)).To(Succeed())
		Expect(sample.Labels).To(HaveKeyWithValue("pod-security.kubernetes.io/enforce", BeElementOf("baseline", "restricted")))

		o := newLabelledOrg("podsecurity", sample.Labels)
		nora := newSubmitter(o, "nora")

		hostPath := pod("node-reader", nil)
		hostPath.Spec.Volumes = []corev1.Volume{{Name: "runtime", VolumeSource: corev1.VolumeSource{
			HostPath: &corev1.HostPathVolumeSource{Path: "/run/containerd"}}}}
		privileged := pod("privileged", nil)
		privileged.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
		hostPID := pod("host-pid", nil)
		hostPID.Spec.HostPID = true
		for _, p := range []*corev1.Pod{hostPath, privileged, hostPID} {
			_, err := nora.CS.CoreV1().Pods(o.Name).Create(ctx, p, metav1.CreateOptions{})
			Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%s: %v", p.Name, err)
			Expect(err.Error()).To(ContainSubstring(`violates PodSecurity "baseline`), p.Name)
		}

		alice := newPerson(o, "alice")
		store(alice, map[string]any{"env_var": "ANTHROPIC_API_KEY", "value": "sk-ant-podsecurity-000000000001"})
		created, err := alice.CS.CoreV1().Pods(o.Name).Create(ctx, pod("alice-run", map[string]string{hubv1alpha1.AnnotationSecrets: "ANTHROPIC_API_KEY"}), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(envRef(created.Spec.Containers[0], "ANTHROPIC_API_KEY")).NotTo(BeNil(), "alice's run still gets her key")
	})
})
