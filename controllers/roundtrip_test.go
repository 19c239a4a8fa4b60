package controllers_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/testenv"
)

var _ = Describe("The generated CRDs", func() {
	It("round-trip a Dataset through the real apiserver", func() {
		ns := testenv.Namespace("roundtrip")
		Expect(k8sClient.Create(ctx, ns)).To(Succeed())

		created := &hubv1alpha1.Dataset{
			ObjectMeta: metav1.ObjectMeta{Name: "swe-bench", Namespace: ns.Name},
			Spec: hubv1alpha1.DatasetSpec{
				Title: "SWE-bench",
				Versions: []hubv1alpha1.DatasetVersion{{
					ID:        "0b8f0d6e-3c7a-4d59-9c1e-2f4f8a7b6c51",
					Tag:       "1.0",
					CreatedAt: metav1.Now(),
					Tasks: []hubv1alpha1.DatasetTask{{
						Name:        "task-1",
						RequiredEnv: []hubv1alpha1.TaskEnvVar{{Name: "GITHUB_TOKEN"}},
					}},
				}},
			},
		}
		Expect(k8sClient.Create(ctx, created)).To(Succeed())

		got := &hubv1alpha1.Dataset{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(created), got)).To(Succeed())
		Expect(got.Spec.Versions).To(HaveLen(1))
		Expect(got.Spec.Versions[0].Tasks[0].RequiredEnv[0].Phase).To(BeEmpty(),
			"no default inside a list: what a client applied is what is stored, so a re-apply is a no-op")
		Expect(string(got.UID)).NotTo(BeEmpty())
	})
})
