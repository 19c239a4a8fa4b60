package secrets_test

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/testenv"
)

var _ = Describe("A secret value", func() {
	It("appears nowhere but in its Secret's data", func() {
		raw := make([]byte, 32)
		_, err := rand.Read(raw)
		Expect(err).NotTo(HaveOccurred())
		canary := base64.RawURLEncoding.EncodeToString(raw)
		// The last four characters are shown on purpose; everything before them, and the
		// value in the encodings a Secret or a careless log would use, must not be.
		needles := []string{
			canary[:len(canary)-4],
			base64.StdEncoding.EncodeToString([]byte(canary)),
			fmt.Sprintf("%x", canary),
			// a registry credential's dockerconfigjson holds it as base64("user:password")
			base64.StdEncoding.EncodeToString([]byte("leak-bot:" + canary)),
		}
		var outputs []string // kubectl output and errors seen by the test
		leak := newOrg("leak")
		owner := newPerson(leak, "owner", "podium-org-owner")
		member := newPerson(leak, "member", "podium-org-member")
		stranger := newPerson(newOrg("leak-other"), "stranger", "podium-org-owner")
		post := func(token string, body any) (int, []byte) { return call(http.MethodPost, "/v1/secrets", token, body) }
		withValue := func(fields map[string]any) map[string]any {
			fields["value"] = canary
			return fields
		}

		By("storing and failing to store over HTTP")
		code, body := post(owner.Token, withValue(map[string]any{"env_var": "LEAK_KEY", "provider": "anthropic"}))
		Expect(code).To(Equal(http.StatusCreated), string(body))
		first := decode[record](body)
		Expect(first.ValueLast4).To(Equal(canary[len(canary)-4:]))
		for _, tc := range []struct {
			token  string
			body   any
			status int
		}{
			{owner.Token, withValue(map[string]any{"env_var": "LEAK_KEY"}), http.StatusConflict},
			{member.Token, withValue(map[string]any{"env_var": "LEAK_KEY", "supersede_credential_id": first.ID}), http.StatusForbidden},
			{owner.Token, withValue(map[string]any{"env_var": "LEAK_KEY", "supersede_credential_id": uuid.NewString()}), http.StatusConflict},
			{owner.Token, withValue(map[string]any{"env_var": "leak_key"}), http.StatusUnprocessableEntity},
			{owner.Token, withValue(map[string]any{"env_var": "LEAK_KEY", "scope": "job"}), http.StatusUnprocessableEntity},
			{owner.Token, withValue(map[string]any{"env_var": "LEAK_KEY", "colour": "red"}), http.StatusBadRequest},
			{owner.Token, withValue(map[string]any{"env_var": 7}), http.StatusBadRequest},
			{owner.Token, `{"env_var": "LEAK_KEY", "value": "` + canary + `"`, http.StatusBadRequest},
			{owner.Token, `{"env_var": "LEAK_KEY", "value": "` + canary + `"} {}`, http.StatusBadRequest},
			{owner.Token, `{"env_var": "LEAK_KEY", "value": ["` + canary + `"]}`, http.StatusBadRequest},
			{owner.Token, withValue(map[string]any{"env_var": "LEAK_KEY", "org_id": uuid.NewString()}), http.StatusNotFound},
			{stranger.Token, withValue(map[string]any{"env_var": "LEAK_KEY", "org_id": leak.UID}), http.StatusForbidden},
			{"", withValue(map[string]any{"env_var": "LEAK_KEY"}), http.StatusUnauthorized},
			{canary, withValue(map[string]any{"env_var": "LEAK_KEY"}), http.StatusUnauthorized},
			{owner.Token, withValue(map[string]any{"env_var": "LEAK_KEY", "provider": strings.Repeat(canary, 2)}), http.StatusUnprocessableEntity},
			{owner.Token, `{"env_var": "LEAK_KEY", "value": "` + strings.Repeat(canary, 40000) + `"}`, http.StatusRequestEntityTooLarge},
		} {
			code, body := post(tc.token, tc.body)
			Expect(code).To(Equal(tc.status), string(body))
		}
		code, body = post(owner.Token, withValue(map[string]any{"env_var": "LEAK_KEY", "supersede_credential_id": first.ID}))
		Expect(code).To(Equal(http.StatusCreated), string(body))
		code, body = post(member.Token, withValue(map[string]any{"env_var": "LEAK_KEY", "scope": "job", "job_id": jobA}))
		Expect(code).To(Equal(http.StatusCreated), string(body))
		code, body = post(member.Token, map[string]any{"env_var": "SHORT_KEY", "value": canary[:6]})
		Expect(code).To(Equal(http.StatusCreated), string(body))
		Expect(decode[record](body).ValueLast4).To(BeEmpty())

		By("storing and failing to store registry credentials over HTTP")
		postReg := func(token string, body any) (int, []byte) {
			return call(http.MethodPost, "/v1/registry-credentials", token, body)
		}
		withPassword := func(fields map[string]any) map[string]any {
			fields["password"] = canary
			for k, v := range map[string]any{"display_name": "leak registry", "registry_host": "registry.leak.example:5000", "username": "leak-bot"} {
				if _, set := fields[k]; !set {
					fields[k] = v
				}
			}
			return fields
		}
		code, body = postReg(member.Token, withPassword(map[string]any{}))
		Expect(code).To(Equal(http.StatusCreated), string(body))
		regID := decode[struct{ ID string }](body).ID
		for _, tc := range []struct {
			token  string
			body   any
			status int
		}{
			{member.Token, withPassword(map[string]any{}), http.StatusConflict},
			{member.Token, withPassword(map[string]any{"supersede_credential_id": regID}), http.StatusForbidden},
			{owner.Token, withPassword(map[string]any{"supersede_credential_id": uuid.NewString()}), http.StatusConflict},
			{owner.Token, withPassword(map[string]any{"registry_host": "https://registry.leak.example"}), http.StatusUnprocessableEntity},
			{owner.Token, withPassword(map[string]any{"username": canary + ":x"}), http.StatusUnprocessableEntity},
			{owner.Token, withPassword(map[string]any{"display_name": canary + ","}), http.StatusUnprocessableEntity},
			{owner.Token, withPassword(map[string]any{"colour": "red"}), http.StatusBadRequest},
			{owner.Token, `{"display_name": "x", "registry_host": "ghcr.io", "username": "u", "password": "` + canary + `"`, http.StatusBadRequest},
			{owner.Token, `{"display_name": "x", "registry_host": "ghcr.io", "username": "u", "password": ["` + canary + `"]}`, http.StatusBadRequest},
			{stranger.Token, withPassword(map[string]any{"org_id": leak.UID}), http.StatusForbidden},
			{"", withPassword(map[string]any{}), http.StatusUnauthorized},
			{canary, withPassword(map[string]any{}), http.StatusUnauthorized},
			{owner.Token, `{"display_name": "x", "registry_host": "ghcr.io", "username": "u", "password": "` + strings.Repeat(canary, 40000) + `"}`, http.StatusRequestEntityTooLarge},
		} {
			code, body := postReg(tc.token, tc.body)
			Expect(code).To(Equal(tc.status), string(body))
		}
		code, body = postReg(owner.Token, withPassword(map[string]any{"supersede_credential_id": regID}))
		Expect(code).To(Equal(http.StatusCreated), string(body))
		code, body = postReg(member.Token, withPassword(map[string]any{"display_name": "leak mirror"}))
		Expect(code).To(Equal(http.StatusCreated), string(body))
		code, body = call(http.MethodGet, "/v1/registry-credentials?status=all", member.Token, nil)
		Expect(code).To(Equal(http.StatusOK), string(body))
		code, body = call(http.MethodDelete, "/v1/registry-credentials", owner.Token, map[string]any{"display_name": "leak registry"})
		Expect(code).To(Equal(http.StatusOK), string(body))
		code, body = call(http.MethodDelete, "/v1/registry-credentials", owner.Token, map[string]any{"display_name": "leak registry", "purge": true})
		Expect(code).To(Equal(http.StatusOK), string(body))
		// The search finds it where it does live: the dockerconfigjson value Secret, in the
		// value namespace like every value stored over HTTP.
		foundRegistry := false
		for _, s := range storedValues(leak) {
			if s.Type == corev1.SecretTypeDockerConfigJson && strings.Contains(string(s.Data[corev1.DockerConfigJsonKey]), needles[3]) {
				foundRegistry = true
			}
		}
		Expect(foundRegistry).To(BeTrue(), "the registry credential's value lives in its dockerconfigjson Secret")
		code, body = call(http.MethodDelete, "/v1/registry-credentials", owner.Token, map[string]any{"display_name": "leak mirror", "purge": true})
		Expect(code).To(Equal(http.StatusOK), string(body))

		By("applying a Secret and a HostedSecret with kubectl")
		manifest := fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata: {name: decl-value, namespace: %[1]s, labels: {hub.podium.dev/hosted-secret: decl}}
stringData: {value: %[2]q}
---
apiVersion: v1
kind: Secret
metadata: {name: decl-other, namespace: %[1]s, labels: {hub.podium.dev/hosted-secret: decl-same-slot}}
stringData: {token: %[2]q}
---
apiVersion: hub.podium.dev/v1alpha1
kind: HostedSecret
metadata: {name: decl, namespace: %[1]s}
spec: {scope: user, owner: %[3]q, envVar: DECL_KEY, secretRef: {name: decl-value}}
---
apiVersion: hub.podium.dev/v1alpha1
kind: HostedSecret
metadata: {name: decl-same-secret, namespace: %[1]s}
spec: {scope: user, owner: %[3]q, envVar: DECL_TWO, secretRef: {name: decl-value}}
---
apiVersion: hub.podium.dev/v1alpha1
kind: HostedSecret
metadata: {name: decl-same-slot, namespace: %[1]s}
spec: {scope: user, owner: %[3]q, envVar: DECL_KEY, secretRef: {name: decl-other, key: token}}
---
apiVersion: v1
kind: Secret
metadata: {name: decl-ungranted, namespace: %[1]s}
stringData: {value: %[2]q}
---
apiVersion: hub.podium.dev/v1alpha1
kind: HostedSecret
metadata: {name: decl-ungranted, namespace: %[1]s}
spec: {scope: user, owner: %[3]q, envVar: DECL_FOUR, secretRef: {name: decl-ungranted}}
---
apiVersion: v1
kind: Secret
metadata: {name: decl-wrong-key, namespace: %[1]s, labels: {hub.podium.dev/hosted-secret: decl-wrong-key}}
stringData: {token: %[2]q}
---
apiVersion: hub.podium.dev/v1alpha1
kind: HostedSecret
metadata: {name: decl-wrong-key, namespace: %[1]s}
spec: {scope: user, owner: %[3]q, envVar: DECL_THREE, secretRef: {name: decl-wrong-key, key: missing}}
`, leak.Name, canary, owner.User)
		kubectl := adminKubectl()
		outputs = append(outputs, kubectl("apply", "-f", writeManifest(manifest)))
		Eventually(func(g Gomega) {
			g.Expect(readyReason(g, leak, "decl")).To(Equal(hubv1alpha1.ReasonActive))
			g.Expect(readyReason(g, leak, "decl-same-slot")).To(Equal(hubv1alpha1.ReasonSlotOccupied))
			g.Expect(readyReason(g, leak, "decl-same-secret")).To(Equal(hubv1alpha1.ReasonSecretNotGranted))
			g.Expect(readyReason(g, leak, "decl-ungranted")).To(Equal(hubv1alpha1.ReasonSecretNotGranted))
			g.Expect(readyReason(g, leak, "decl-wrong-key")).To(Equal(hubv1alpha1.ReasonValueMissing))
		}).Should(Succeed())
		outputs = append(outputs,
			kubectl("get", "hostedsecrets", "-n", leak.Name, "-o", "yaml"),
			kubectl("get", "hostedsecrets", "-n", leak.Name, "-o", "wide"),
			kubectl("describe", "hostedsecrets", "-n", leak.Name),
		)

		By("delivering it into a Job and a Pod, with warnings")
		runs := deliverForLeakTest(leak, owner, jobA)
		outputs = append(outputs, runs.warnings...)
		outputs = append(outputs, kubectl("apply", "-f", writeManifest(fmt.Sprintf(`apiVersion: batch/v1
kind: Job
metadata:
  name: leak-job
  namespace: %s
  annotations: {hub.podium.dev/secrets: "LEAK_KEY,DECL_KEY,PATH", hub.podium.dev/job-id: %q, hub.podium.dev/models: "a=anthropic/x"}
spec:
  managedBy: test.podium.dev/none
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
`, leak.Name, jobA))))
		outputs = append(outputs,
			kubectl("get", "jobs,pods", "-n", leak.Name, "-o", "yaml"),
			kubectl("describe", "jobs,pods", "-n", leak.Name),
		)

		By("the values stored over HTTP are in the operator's value namespace, none in the org's")
		// LEAK_KEY (the superseding one), LEAK_KEY of job A, SHORT_KEY.
		Expect(storedValues(leak)).To(HaveLen(3))
		Expect(mustJSON(storedValues(leak))).To(ContainSubstring(needles[1]))
		var inOrg corev1.SecretList
		Expect(k8sClient.List(ctx, &inOrg, client.InNamespace(leak.Name))).To(Succeed())
		for _, s := range inOrg.Items {
			if strings.HasPrefix(s.Name, "decl-") || s.Labels[hubv1alpha1.LabelRunFor] != "" {
				continue // applied with kubectl by the platform team, or a run's Secret
			}
			Expect(mustJSON(s)).NotTo(ContainSubstring(needles[1]), "Secret %s of the org namespace holds the value", s.Name)
		}

		By("listing, checking, revoking and purging")
		Expect(list(owner, "?status=all")).NotTo(BeEmpty())
		Expect(list(member, "?scope=job&job_id="+jobA)).To(HaveLen(1))
		code, _ = call(http.MethodPost, "/v1/secrets/preflight", owner.Token, map[string]any{
			"config":            map[string]any{"agents": []any{map[string]any{"name": "a", "model_name": "anthropic/x", "secrets": []string{"LEAK_KEY", "DECL_KEY"}}}},
			"declared_env_vars": []string{"EXTRA"},
		})
		Expect(code).To(Equal(http.StatusOK))
		Expect(revoke(owner, map[string]any{"env_var": "DECL_KEY"})).To(Equal(1))
		Expect(revoke(member, map[string]any{"scope": "job", "job_id": jobA, "env_var": "LEAK_KEY"})).To(Equal(1))
		Expect(revoke(member, map[string]any{"env_var": "SHORT_KEY", "purge": true})).To(Equal(1))
		Expect(revoke(owner, map[string]any{"env_var": "LEAK_KEY"})).To(Equal(1))
		code, body = post(owner.Token, withValue(map[string]any{"env_var": "LEAK_KEY"}))
		Expect(code).To(Equal(http.StatusCreated), string(body))
		Expect(revoke(owner, map[string]any{"env_var": "LEAK_KEY", "purge": true})).To(Equal(3))
		// The declarative secret waiting for DECL_KEY's slot claims it once it is free.
		Eventually(func(g Gomega) { g.Expect(readyReason(g, leak, "decl-same-slot")).To(Equal(hubv1alpha1.ReasonActive)) }).Should(Succeed())

		By("searching everything the system said")
		haystacks := map[string]string{
			"operator logs":  logs.String(),
			"HTTP responses": transcript.String(),
			"kubectl output": strings.Join(outputs, "\n"),
		}
		var hss hubv1alpha1.HostedSecretList
		Expect(k8sClient.List(ctx, &hss)).To(Succeed())
		haystacks["HostedSecrets"] = mustJSON(hss)
		var coreEvents corev1.EventList
		Expect(k8sClient.List(ctx, &coreEvents)).To(Succeed())
		var events eventsv1.EventList
		Expect(k8sClient.List(ctx, &events)).To(Succeed())
		Expect(events.Items).NotTo(BeEmpty(), "the operator records events")
		haystacks["events"] = mustJSON(coreEvents) + mustJSON(events)
		var leases coordinationv1.LeaseList
		Expect(k8sClient.List(ctx, &leases)).To(Succeed())
		haystacks["slot pointers"] = mustJSON(leases)
		var jobs batchv1.JobList
		Expect(k8sClient.List(ctx, &jobs, client.InNamespace(leak.Name))).To(Succeed())
		var pods corev1.PodList
		Expect(k8sClient.List(ctx, &pods, client.InNamespace(leak.Name))).To(Succeed())
		Expect(jobs.Items).NotTo(BeEmpty())
		Expect(pods.Items).NotTo(BeEmpty())
		haystacks["Jobs and Pods"] = mustJSON(jobs) + mustJSON(pods)
		for name, hay := range haystacks {
			for _, n := range needles {
				Expect(strings.Contains(hay, n)).To(BeFalse(), "the value leaked into %s", name)
			}
		}

		By("revoke and purge left no value of the org in the value namespace")
		Expect(storedValues(leak)).To(BeEmpty())
		var valueNS corev1.SecretList
		Expect(k8sClient.List(ctx, &valueNS, client.InNamespace(valueNamespace))).To(Succeed())
		for _, n := range needles {
			Expect(mustJSON(valueNS)).NotTo(ContainSubstring(n))
		}

		By("the search finds the value where it does live")
		var secrets corev1.SecretList
		Expect(k8sClient.List(ctx, &secrets, client.InNamespace(leak.Name))).To(Succeed())
		Expect(mustJSON(secrets)).To(ContainSubstring(needles[1]))
		// ... and in the run Secret of the Pod, which held it by design until the secrets
		// it holds were revoked (the Pod never started, so their values were removed).
		Expect(runs.podRunSecretJSON).To(ContainSubstring(needles[1]))
		Eventually(func(g Gomega) string {
			runSecret := &corev1.Secret{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: leak.Name, Name: runs.podRunSecret}, runSecret)).To(Succeed())
			return mustJSON(runSecret)
		}).ShouldNot(ContainSubstring(needles[1]))
		hs := &hubv1alpha1.HostedSecret{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: leak.Name, Name: "decl-same-slot"}, hs)).To(Succeed())
		Expect(meta.IsStatusConditionTrue(hs.Status.Conditions, hubv1alpha1.ConditionReady)).To(BeTrue())
	})
})

// leakRuns is what deliverForLeakTest made.
type leakRuns struct {
	warnings         []string
	podRunSecret     string
	podRunSecretJSON string
}

// deliverForLeakTest has p create a Pod asking for its secrets (LEAK_KEY, DECL_KEY), a
// reserved name and a missing one, and returns the warnings it was sent.
func deliverForLeakTest(o org, p person, jobID string) leakRuns {
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: o.Name, Name: "leak-runs"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create"}}},
	}
	Expect(k8sClient.Create(ctx, role)).To(Succeed())
	user := strings.Split(p.User, ":")
	Expect(k8sClient.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: o.Name, Name: "leak-runs"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "leak-runs"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: user[2], Name: user[3]}},
	})).To(Succeed())
	w := &warningRecorder{}
	pc := rest.AnonymousClientConfig(cfg)
	pc.BearerToken = p.Token
	pc.WarningHandler = w
	cs, err := kubernetes.NewForConfig(pc)
	Expect(err).NotTo(HaveOccurred())
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "leak-pod", Annotations: map[string]string{
			hubv1alpha1.AnnotationSecrets: "LEAK_KEY,DECL_KEY,PATH,NOT_STORED",
			hubv1alpha1.AnnotationJobID:   jobID,
			hubv1alpha1.AnnotationModels:  "a=anthropic/x,b=openai/y",
		}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
	created, err := cs.CoreV1().Pods(o.Name).Create(ctx, pod, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	Expect(created.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationDelivered, "LEAK_KEY,DECL_KEY"))
	Expect(w.msgs).To(ContainElement(ContainSubstring("NOT_STORED is not delivered")))
	// The run Secret is written once the Pod is stored, a moment after its admission.
	runSecret := &corev1.Secret{}
	Eventually(func() error {
		return k8sClient.Get(ctx, client.ObjectKey{Namespace: o.Name, Name: created.Labels[hubv1alpha1.LabelRunSecret]}, runSecret)
	}).Should(Succeed())
	return leakRuns{warnings: w.msgs, podRunSecret: runSecret.Name, podRunSecretJSON: mustJSON(runSecret)}
}

type warningRecorder struct{ msgs []string }

func (w *warningRecorder) HandleWarningHeader(_ int, _ string, msg string) {
	w.msgs = append(w.msgs, msg)
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return string(b)
}

func writeManifest(s string) string {
	path := filepath.Join(GinkgoT().TempDir(), "manifest.yaml")
	Expect(os.WriteFile(path, []byte(s), 0o600)).To(Succeed())
	return path
}

// adminKubectl returns a function running the pinned kubectl as a cluster admin against
// the test's apiserver, returning its combined output.
func adminKubectl() func(args ...string) string {
	u, err := testEnv.AddUser(envtest.User{Name: "platform-admin", Groups: []string{"system:masters"}}, nil)
	Expect(err).NotTo(HaveOccurred())
	k, err := u.Kubectl()
	Expect(err).NotTo(HaveOccurred())
	k.Path, err = testenv.Kubectl()
	Expect(err).NotTo(HaveOccurred())
	return func(args ...string) string {
		stdout, stderr, err := k.Run(args...)
		out, _ := io.ReadAll(stdout)
		errOut, _ := io.ReadAll(stderr)
		ExpectWithOffset(1, err).NotTo(HaveOccurred(), string(errOut))
		return string(out) + string(errOut)
	}
}
