package controllers_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/discovery"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

var _ = Describe("The names kubectl knows Podium's kinds by", func() {
	It("are none of a built-in kind's names or short names, as the apiserver's discovery lists them", func() {
		dc, err := discovery.NewDiscoveryClientForConfig(cfg)
		Expect(err).NotTo(HaveOccurred())
		_, lists, err := dc.ServerGroupsAndResources()
		Expect(err).NotTo(HaveOccurred())

		builtin := map[string]string{} // name -> the built-in resource that uses it
		ours := map[string]string{}    // name -> our resource
		for _, l := range lists {
			group := strings.Split(l.GroupVersion, "/")[0]
			if !strings.Contains(l.GroupVersion, "/") {
				group = "core"
			}
			for _, r := range l.APIResources {
				if strings.Contains(r.Name, "/") {
					continue // a subresource
				}
				names := append([]string{r.Name, r.SingularName}, r.ShortNames...)
				for _, n := range names {
					if n == "" {
						continue
					}
					if group == hubv1alpha1.GroupVersion.Group {
						ours[n] = r.Name
					} else {
						builtin[n] = r.Name + "." + group
					}
				}
			}
		}
		Expect(ours).To(HaveKey("dset"), "Dataset's short name")
		Expect(ours).To(HaveKey("lb"))
		Expect(ours).To(HaveKey("lbrow"))
		Expect(ours).To(HaveKey("hs"))
		Expect(builtin).To(HaveKey("ds"), "the check sees the built-in short names (ds is DaemonSets')")
		for n, r := range ours {
			Expect(builtin).NotTo(HaveKey(n), "%s's name %q is also %s's", r, n, builtin[n])
		}
	})
})
