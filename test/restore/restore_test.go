// Package restore_test backs up an organization from one control plane and restores it
// into fresh ones, as a platform team does with Velero (docs/operations.md, "Backup and restore"): every
// object of Podium's kinds plus the Secrets, ServiceAccounts, Roles, RoleBindings and
// Leases of the org and value namespaces, exported without uid, resourceVersion,
// creationTimestamp, managedFields, ownerReferences and status, then created again by
// an admin, in Velero's order, with the operator running; once without status and once
// with status patched back as Velero's restoreStatus does. It then compares what users
// see: the public read and row history of the board, the secrets and registry
// credentials listed over HTTP, and the values delivered into a run.
package restore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/scheme"
	"podium.dev/podium/internal/testenv"
)

const (
	org    = "acme"
	member = "alice"
)

// newG is gomega for t, with waits sized for a busy machine.
func newG(t *testing.T) *WithT {
	g := NewWithT(t)
	g.SetDefaultEventuallyTimeout(time.Minute)
	g.SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	return g
}

// cluster is one control plane with the operator running.
type cluster struct {
	cfg    *rest.Config
	c      client.Client
	cs     *kubernetes.Clientset
	base   string
	stop   func()
	member string // alice's token
}

func startCluster(t *testing.T, g Gomega, beforeOperator func(*cluster)) *cluster {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	env, cfg, err := testenv.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { cancel(); _ = env.Stop() }) // also when an expectation fails before the operator runs
	cl := &cluster{cfg: cfg}
	cl.c, err = client.New(cfg, client.Options{Scheme: scheme.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	cl.cs, err = kubernetes.NewForConfig(cfg)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(testenv.ApplyOrgRoles(ctx, cl.cs)).To(Succeed())
	if beforeOperator != nil {
		beforeOperator(cl)
	}
	op, err := testenv.StartOperatorWithDelivery(ctx, cfg, 0)
	g.Expect(err).NotTo(HaveOccurred())
	cl.base = op.BaseURL
	var once sync.Once
	cl.stop = func() {
		once.Do(func() {
			cancel()
			<-op.Done
			_ = env.Stop()
		})
	}
	t.Cleanup(cl.stop)
	return cl
}

// call makes an HTTP request to the operator's API; token "" is anonymous.
func (cl *cluster) call(g Gomega, method, path, token string, body any) (int, []byte) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		g.Expect(err).NotTo(HaveOccurred())
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, cl.base+path, rd)
	g.Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	g.Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	g.Expect(err).NotTo(HaveOccurred())
	return resp.StatusCode, out
}

func (cl *cluster) ok(g Gomega, method, path, token string, body any, want int) []byte {
	code, out := cl.call(g, method, path, token, body)
	g.ExpectWithOffset(1, code).To(Equal(want), "%s %s: %s", method, path, out)
	return out
}

// asMember is a client acting as the org member (impersonating her ServiceAccount).
func (cl *cluster) asMember(g Gomega) client.Client {
	c := rest.CopyConfig(cl.cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + org + ":" + member,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + org, "system:authenticated"}}
	mc, err := client.New(c, client.Options{Scheme: scheme.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	return mc
}

func (cl *cluster) memberToken(g Gomega) string {
	tr, err := cl.cs.CoreV1().ServiceAccounts(org).CreateToken(context.Background(), member, &authenticationTokenRequest, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	return tr.Status.Token
}

func raw(s string) *apiextensionsv1.JSON { return &apiextensionsv1.JSON{Raw: []byte(s)} }

// seed makes what a team has after some use: a dataset, a public board whose rows a
// member created and changed (history), a user-scope secret and a registry credential
// stored over HTTP, and a declarative secret applied with kubectl.
//
// seedBoard runs before the operator starts, as an older Podium left them: the org, its
// dataset and board, and the row row-legacy, stored with no recorded identity (no row
// webhook, no operator to record it). The operator records it in a ledger
// (RowIdentityLedger), never on the row; a restore must bring its id back.
func seedBoard(g Gomega, cl *cluster) {
	ctx := context.Background()
	g.Expect(cl.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: org}})).To(Succeed())
	g.Expect(cl.c.Create(ctx, &hubv1alpha1.Dataset{
		ObjectMeta: metav1.ObjectMeta{Namespace: org, Name: "bench"},
		Spec: hubv1alpha1.DatasetSpec{Versions: []hubv1alpha1.DatasetVersion{
			{ID: "6ba7b810-9dad-11d1-80b4-00c04fd430c8", Tag: "v1", CreatedAt: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))},
		}},
	})).To(Succeed())
	g.Expect(cl.c.Create(ctx, &hubv1alpha1.Leaderboard{
		ObjectMeta: metav1.ObjectMeta{Namespace: org, Name: "main"},
		Spec: hubv1alpha1.LeaderboardSpec{Package: org + "/bench", Name: "main", Title: "Main", Visibility: hubv1alpha1.VisibilityPublic,
			ShowAuthors: true, MetricsSchema: raw(`{"type":"object","properties":{"score":{"type":"number"}}}`),
			RankBy: []hubv1alpha1.RankRule{{Accessor: "metrics.score", Direction: "desc"}}},
	})).To(Succeed())
	legacy := &hubv1alpha1.LeaderboardRow{
		ObjectMeta: metav1.ObjectMeta{Namespace: org, Name: "row-legacy"},
		Spec:       hubv1alpha1.LeaderboardRowSpec{Leaderboard: "main", Metrics: raw(`{"score":0}`)},
	}
	g.Expect(cl.c.Create(ctx, legacy)).To(Succeed())
	g.Expect(legacy.Annotations).NotTo(HaveKey(hubv1alpha1.AnnotationID))
}

// rowIdentityHeld says whether a row's identity is recorded where a backup keeps it: in
// its annotations, or in a ledger of its namespace (with its UID: the row as it is).
func rowIdentityHeld(g Gomega, cl *cluster, r *hubv1alpha1.LeaderboardRow) bool {
	if hubv1alpha1.IdentityRecorded(r) {
		return true
	}
	ledgers := &hubv1alpha1.RowIdentityLedgerList{}
	g.Expect(cl.c.List(context.Background(), ledgers, client.InNamespace(r.Namespace))).To(Succeed())
	e, held := hubv1alpha1.LedgerIdentity(ledgers.Items, r.Name)
	return held && e.ID == string(r.UID)
}

// seed makes the rest of the org's state, with the operator running.
func seed(g Gomega, cl *cluster) {
	ctx := context.Background()
	tok, err := testenv.ServiceAccountToken(ctx, cl.cs, org, member, "podium-org-owner")
	g.Expect(err).NotTo(HaveOccurred())
	cl.member = tok
	g.Expect(cl.c.Create(ctx, rbacRole.DeepCopy())).To(Succeed())
	g.Expect(cl.c.Create(ctx, rbacBinding.DeepCopy())).To(Succeed())

	// Every write of a row, as a watch sees it, from before the first create.
	wc, err := client.NewWithWatch(cl.cfg, client.Options{Scheme: scheme.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	w, err := wc.Watch(ctx, &hubv1alpha1.LeaderboardRowList{}, client.InNamespace(org))
	g.Expect(err).NotTo(HaveOccurred())
	defer w.Stop()
	alice := cl.asMember(g)
	board := &hubv1alpha1.Leaderboard{}
	g.Expect(cl.c.Get(ctx, client.ObjectKey{Namespace: org, Name: "main"}, board)).To(Succeed())
	for i, score := range []int{3, 1, 2} {
		r := &hubv1alpha1.LeaderboardRow{
			ObjectMeta: metav1.ObjectMeta{Namespace: org, Name: fmt.Sprintf("row-%d", i)},
			Spec:       hubv1alpha1.LeaderboardRowSpec{Leaderboard: "main", Metrics: raw(fmt.Sprintf(`{"score":%d}`, score))},
		}
		if i == 1 {
			// As the CLI sends a row: with its board's controller reference. A member's
			// row still goes to the webhook for its id (only a restore identity's does not).
			controller := true
			r.OwnerReferences = []metav1.OwnerReference{{APIVersion: hubv1alpha1.GroupVersion.String(), Kind: "Leaderboard",
				Name: board.Name, UID: board.UID, Controller: &controller}}
		}
		g.Expect(alice.Create(ctx, r)).To(Succeed())
		// The operator's admission webhook recorded the row's identity and its board's
		// controller reference in the create itself (internal/rowadmission).
		g.Expect(hubv1alpha1.IdentityRecorded(r)).To(BeTrue(), "identity in the create of %s", r.Name)
		g.Expect(r.Annotations[hubv1alpha1.AnnotationID]).NotTo(Equal(string(r.UID)), "a new id, not the UID")
		g.Expect(metav1.GetControllerOf(r)).To(HaveField("Name", "main"), "controller of %s", r.Name)
	}
	// Rows are valid and their identity recorded before a change makes history.
	g.Eventually(func(g Gomega) {
		rows := &hubv1alpha1.LeaderboardRowList{}
		g.Expect(cl.c.List(ctx, rows, client.InNamespace(org))).To(Succeed())
		g.Expect(rows.Items).To(HaveLen(4))
		for _, r := range rows.Items {
			g.Expect(rowIdentityHeld(g, cl, &r)).To(BeTrue(), r.Name)
			g.Expect(r.Status.ObservedGeneration).To(Equal(r.Generation))
		}
	}).WithTimeout(time.Minute).Should(Succeed())
	// Two writes a row: its create and the operator's status; no metadata write of the
	// operator's own (docs/performance.md, "Rows in"). Rows 0 and 2 are written by
	// nobody else; every write of them is an event of the watch.
	writes := map[string][]*hubv1alpha1.LeaderboardRow{}
	g.Eventually(func(g Gomega) {
		for len(w.ResultChan()) > 0 || len(writes["row-0"]) < 2 || len(writes["row-2"]) < 2 {
			select {
			case e := <-w.ResultChan():
				if r, ok := e.Object.(*hubv1alpha1.LeaderboardRow); ok {
					writes[r.Name] = append(writes[r.Name], r)
				}
			case <-time.After(100 * time.Millisecond):
				g.Expect(writes["row-0"]).To(HaveLen(2))
				g.Expect(writes["row-2"]).To(HaveLen(2))
			}
		}
	}).Should(Succeed())
	for _, name := range []string{"row-0", "row-2"} {
		ws := writes[name]
		g.Expect(ws).To(HaveLen(2), "%s: its create and its status", name)
		g.Expect(ws[1].Annotations).To(Equal(ws[0].Annotations), "%s: no metadata write", name)
		g.Expect(ws[1].OwnerReferences).To(Equal(ws[0].OwnerReferences), "%s: no metadata write", name)
	}
	g.Eventually(func() error {
		r := &hubv1alpha1.LeaderboardRow{}
		if err := alice.Get(ctx, client.ObjectKey{Namespace: org, Name: "row-1"}, r); err != nil {
			return err
		}
		r.Spec.Metrics = raw(`{"score":5}`)
		return alice.Update(ctx, r)
	}).Should(Succeed())

	cl.ok(g, http.MethodPost, "/v1/secrets", cl.member, map[string]any{"env_var": "OPENAI_API_KEY", "value": "sk-live-restore-1234", "provider": "openai"}, http.StatusCreated)
	cl.ok(g, http.MethodPost, "/v1/registry-credentials", cl.member, map[string]any{
		"display_name": "ghcr", "registry_host": "ghcr.io", "username": "podium-bot", "password": "ghp-restore-5678"}, http.StatusCreated)
	g.Expect(cl.c.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: org, Name: "decl-value", Labels: map[string]string{hubv1alpha1.LabelHostedSecret: "decl"}},
		StringData: map[string]string{"value": "declared-9012"},
	})).To(Succeed())
	g.Expect(cl.c.Create(ctx, &hubv1alpha1.HostedSecret{
		ObjectMeta: metav1.ObjectMeta{Namespace: org, Name: "decl"},
		Spec: hubv1alpha1.HostedSecretSpec{Owner: "system:serviceaccount:" + org + ":" + member, EnvVar: "DECL_KEY",
			SecretRef: hubv1alpha1.SecretValueRef{Name: "decl-value"}},
	})).To(Succeed())
}

// settled waits until every row is described by its status and every secret is active
// with its identity recorded.
func settled(g Gomega, cl *cluster) {
	ctx := context.Background()
	g.Eventually(func(g Gomega) {
		rows := &hubv1alpha1.LeaderboardRowList{}
		g.Expect(cl.c.List(ctx, rows, client.InNamespace(org))).To(Succeed())
		g.Expect(rows.Items).To(HaveLen(4))
		for _, r := range rows.Items {
			g.Expect(r.Status.ObservedGeneration).To(Equal(r.Generation))
			g.Expect(r.Status.ID).To(Equal(hubv1alpha1.ID(&r)))
			g.Expect(rowIdentityHeld(g, cl, &r)).To(BeTrue(), r.Name)
		}
		lb := &hubv1alpha1.Leaderboard{}
		g.Expect(cl.c.Get(ctx, client.ObjectKey{Namespace: org, Name: "main"}, lb)).To(Succeed())
		g.Expect(lb.Status.RankedRows).To(Equal(int32(4)))
		g.Expect(lb.Labels[hubv1alpha1.LabelID]).To(Equal(hubv1alpha1.ID(lb)))
		hss := &hubv1alpha1.HostedSecretList{}
		g.Expect(cl.c.List(ctx, hss, client.InNamespace(org))).To(Succeed())
		g.Expect(hss.Items).To(HaveLen(3))
		for _, hs := range hss.Items {
			g.Expect(hs.Status.State).To(Equal(hubv1alpha1.StateActive), hs.Name)
			g.Expect(hubv1alpha1.IdentityRecorded(&hs)).To(BeTrue(), hs.Name)
			ready := metaCondition(hs.Status.Conditions, hubv1alpha1.ConditionReady)
			g.Expect(ready).NotTo(BeNil(), hs.Name)
			g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), hs.Name)
		}
		ns := &corev1.Namespace{}
		g.Expect(cl.c.Get(ctx, client.ObjectKey{Name: org}, ns)).To(Succeed())
		g.Expect(hubv1alpha1.IdentityRecorded(ns)).To(BeTrue(), "the org's identity on its namespace")
	}).WithTimeout(2 * time.Minute).Should(Succeed())
}

// forgedRowIDReissued: with the row webhook up, a member who creates a row claiming
// another row's id and time still gets neither. The row metadata policy, which the
// apiserver runs before every mutating webhook, empties them; the webhook then fills
// nothing (a new UUID would hide the refusal); the operator gives the row its UID as id
// and says so with an IDReissued event. The row is deleted before the backup.
func forgedRowIDReissued(g Gomega, cl *cluster) {
	ctx := context.Background()
	victim := &hubv1alpha1.LeaderboardRow{}
	g.Expect(cl.c.Get(ctx, client.ObjectKey{Namespace: org, Name: "row-0"}, victim)).To(Succeed())
	forged := &hubv1alpha1.LeaderboardRow{
		ObjectMeta: metav1.ObjectMeta{Namespace: org, Name: "forged", Annotations: map[string]string{
			hubv1alpha1.AnnotationID: hubv1alpha1.ID(victim), hubv1alpha1.AnnotationCreatedAt: "2020-01-01T00:00:00Z"}},
		// A board that does not exist: the row is never ranked, so the backup's board
		// read is as if it had never been.
		Spec: hubv1alpha1.LeaderboardRowSpec{Leaderboard: "elsewhere", Metrics: raw(`{"score":9}`)},
	}
	g.Expect(cl.asMember(g).Create(ctx, forged)).To(Succeed())
	g.Expect(forged.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationID, ""), "admission emptied the id; the webhook did not fill it")
	g.Expect(forged.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationCreatedAt, ""))
	g.Eventually(func(g Gomega) {
		g.Expect(cl.c.Get(ctx, client.ObjectKeyFromObject(forged), forged)).To(Succeed())
		g.Expect(forged.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationID, string(forged.UID)))
		evs := &eventsv1.EventList{}
		g.Expect(cl.c.List(ctx, evs, client.InNamespace(org))).To(Succeed())
		reissued := false
		for _, e := range evs.Items {
			reissued = reissued || (e.Regarding.Name == "forged" && e.Reason == "IDReissued")
		}
		g.Expect(reissued).To(BeTrue(), "an IDReissued event on the row")
	}).Should(Succeed())
	g.Expect(cl.c.Delete(ctx, forged)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(cl.c.Get(ctx, client.ObjectKeyFromObject(forged), &hubv1alpha1.LeaderboardRow{}))
	}).Should(BeTrue())
}

// orgIdentityHeld checks that the org's id (org_id) is its namespace's UID, recorded on
// the namespace, and that a cluster user who may update namespaces but holds no restore
// verb cannot change it: admission puts the recorded id back.
func orgIdentityHeld(g Gomega, cl *cluster) {
	ctx := context.Background()
	ns := &corev1.Namespace{}
	g.Expect(cl.c.Get(ctx, client.ObjectKey{Name: org}, ns)).To(Succeed())
	g.Expect(ns.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationID, string(ns.UID)))
	g.Expect(string(cl.ok(g, http.MethodGet, "/v1/secrets", cl.member, nil, http.StatusOK))).To(ContainSubstring(`"org_id":"` + string(ns.UID) + `"`))

	const editor = "namespace-editor"
	g.Expect(cl.c.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: editor},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get", "update", "patch"}}}})).To(Succeed())
	g.Expect(cl.c.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: editor},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: editor},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: editor}}})).To(Succeed())
	c := rest.CopyConfig(cl.cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: editor, Groups: []string{"system:authenticated"}}
	ed, err := client.New(c, client.Options{Scheme: scheme.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	patch := []byte(`{"metadata":{"annotations":{"hub.podium.dev/id":"6ba7b810-9dad-11d1-80b4-00c04fd430c8"}}}`)
	g.Eventually(func() error { // the editor's binding reaches the authorizer's cache
		return ed.Patch(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: org}}, client.RawPatch(types.MergePatchType, patch))
	}).Should(Succeed())
	g.Expect(cl.c.Get(ctx, client.ObjectKey{Name: org}, ns)).To(Succeed())
	g.Expect(ns.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationID, string(ns.UID)), "the recorded org id is put back")
}

func metaCondition(cs []metav1.Condition, typ string) *metav1.Condition {
	for i := range cs {
		if cs[i].Type == typ {
			return &cs[i]
		}
	}
	return nil
}

// view is what users see of the org.
type view struct {
	Board     string            // the public read of the board, as served
	Histories map[string]string // row id -> its history read
	Secrets   string            // GET /v1/secrets as the member
	Registry  string            // GET /v1/registry-credentials as the member
}

func look(g Gomega, cl *cluster, token string) view {
	lb := &hubv1alpha1.Leaderboard{}
	g.Expect(cl.c.Get(context.Background(), client.ObjectKey{Namespace: org, Name: "main"}, lb)).To(Succeed())
	id := hubv1alpha1.ID(lb)
	v := view{Histories: map[string]string{}}
	v.Board = string(cl.ok(g, http.MethodPost, "/v1/leaderboard-read", "", map[string]any{"leaderboard_id": id}, http.StatusOK))
	var read struct{ Rows []struct{ ID string } }
	g.Expect(json.Unmarshal([]byte(v.Board), &read)).To(Succeed())
	for _, r := range read.Rows {
		v.Histories[r.ID] = string(cl.ok(g, http.MethodGet, "/v1/leaderboards/"+id+"/rows/"+r.ID+"/history", "", nil, http.StatusOK))
	}
	v.Secrets = string(cl.ok(g, http.MethodGet, "/v1/secrets", token, nil, http.StatusOK))
	v.Registry = string(cl.ok(g, http.MethodGet, "/v1/registry-credentials", token, nil, http.StatusOK))
	return v
}

// deliver starts a run as the member asking for both env secrets and returns what its
// run Secret holds.
func deliver(g Gomega, cl *cluster, token string) map[string]string {
	pc := rest.AnonymousClientConfig(cl.cfg)
	pc.BearerToken = token
	cs, err := kubernetes.NewForConfig(pc)
	g.Expect(err).NotTo(HaveOccurred())
	pod, err := cs.CoreV1().Pods(org).Create(context.Background(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "run-", Annotations: map[string]string{hubv1alpha1.AnnotationSecrets: "OPENAI_API_KEY,DECL_KEY"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(pod.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationDelivered, "OPENAI_API_KEY,DECL_KEY"))
	// The run Secret is written once the Pod is stored, a moment after its admission.
	run := &corev1.Secret{}
	g.Eventually(func() error {
		return cl.c.Get(context.Background(), client.ObjectKey{Namespace: org, Name: pod.Labels[hubv1alpha1.LabelRunSecret]}, run)
	}).Should(Succeed())
	out := map[string]string{}
	for k, v := range run.Data {
		out[k] = string(v)
	}
	return out
}

// backedUp is one exported object: stripped as Velero strips it, its status kept aside.
type backedUp struct {
	resource string // Velero's restore order key
	obj      *unstructured.Unstructured
	status   any
}

var backupKinds = []struct {
	resource string
	gvk      schema.GroupVersionKind
}{
	{"secrets", corev1.SchemeGroupVersion.WithKind("Secret")},
	{"serviceaccounts", corev1.SchemeGroupVersion.WithKind("ServiceAccount")},
	{"datasets.hub.podium.dev", hubv1alpha1.GroupVersion.WithKind("Dataset")},
	{"hostedsecrets.hub.podium.dev", hubv1alpha1.GroupVersion.WithKind("HostedSecret")},
	{"leaderboardrows.hub.podium.dev", hubv1alpha1.GroupVersion.WithKind("LeaderboardRow")},
	{"leaderboards.hub.podium.dev", hubv1alpha1.GroupVersion.WithKind("Leaderboard")},
	// After the rows in Velero's order: a restored row the operator sees first is
	// recorded anew, then takes the older identity its restored ledger holds.
	{"rowidentityledgers.hub.podium.dev", hubv1alpha1.GroupVersion.WithKind("RowIdentityLedger")},
	{"leases.coordination.k8s.io", schema.GroupVersionKind{Group: "coordination.k8s.io", Version: "v1", Kind: "Lease"}},
	{"rolebindings.rbac.authorization.k8s.io", schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"}},
	{"roles.rbac.authorization.k8s.io", schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"}},
}

func backup(g Gomega, cl *cluster) []backedUp {
	var out []backedUp
	for _, ns := range []string{org, testenv.DeliveryNamespace} {
		// The Namespace object itself (Velero backs it up with its namespace): its
		// annotations hold the org's identity, its org_id.
		n := &unstructured.Unstructured{}
		n.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
		g.Expect(cl.c.Get(context.Background(), client.ObjectKey{Name: ns}, n)).To(Succeed())
		for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "managedFields"} {
			unstructured.RemoveNestedField(n.Object, "metadata", f)
		}
		delete(n.Object, "spec") // finalizers: the apiserver sets them
		delete(n.Object, "status")
		out = append(out, backedUp{resource: "namespaces", obj: n})
		for _, k := range backupKinds {
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(k.gvk.GroupVersion().WithKind(k.gvk.Kind + "List"))
			g.Expect(cl.c.List(context.Background(), list, client.InNamespace(ns))).To(Succeed())
			for i := range list.Items {
				o := &list.Items[i]
				o.SetGroupVersionKind(k.gvk)
				b := backedUp{resource: k.resource, obj: o, status: o.Object["status"]}
				for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "managedFields", "ownerReferences", "generation", "deletionTimestamp", "deletionGracePeriodSeconds"} {
					unstructured.RemoveNestedField(o.Object, "metadata", f)
				}
				delete(o.Object, "status")
				out = append(out, b)
			}
		}
	}
	return out
}

// veleroOrder is Velero's default restore priority for the kinds backed up: Secrets
// and ServiceAccounts first, the rest in resource name order.
func veleroOrder(objs []backedUp) {
	prio := func(r string) string {
		switch r {
		case "namespaces":
			return "/"
		case "serviceaccounts":
			return "0"
		case "secrets":
			return "1"
		}
		return "2" + r
	}
	sort.SliceStable(objs, func(i, j int) bool { return prio(objs[i].resource) < prio(objs[j].resource) })
}

// restore creates the objects as the admin (a restore identity), skipping those that
// exist (Velero's default), and with status patches the status back afterwards.
func restore(g Gomega, cl *cluster, objs []backedUp, only func(string) bool, withStatus bool) {
	ctx := context.Background()
	for _, b := range objs {
		if !only(b.resource) {
			continue
		}
		o := b.obj.DeepCopy()
		err := cl.c.Create(ctx, o)
		if apierrors.IsAlreadyExists(err) {
			continue
		}
		g.Expect(err).NotTo(HaveOccurred(), "%s %s/%s", b.resource, o.GetNamespace(), o.GetName())
		if withStatus && b.status != nil && strings.HasSuffix(b.resource, ".hub.podium.dev") {
			// A merge patch of the status subresource: the operator may have written
			// the object (its identity) since the create.
			patch, err := json.Marshal(map[string]any{"status": b.status})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(cl.c.Status().Patch(ctx, o, client.RawPatch(types.MergePatchType, patch))).To(Succeed(), "status of %s %s", b.resource, o.GetName())
		}
	}
}

func TestBackupAndRestore(t *testing.T) {
	logf.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	klog.SetLogger(logf.Log)
	g := newG(t)

	src := startCluster(t, g, func(cl *cluster) { seedBoard(g, cl) })
	seed(g, src)
	settled(g, src)
	forgedRowIDReissued(g, src)
	orgIdentityHeld(g, src)
	delivered := deliver(g, src, src.member)
	g.Expect(delivered).To(Equal(map[string]string{"OPENAI_API_KEY": "sk-live-restore-1234", "DECL_KEY": "declared-9012"}))
	g.Eventually(func(g Gomega) { // the delivery's last_used_at is in the list
		g.Expect(string(src.ok(g, http.MethodGet, "/v1/secrets", src.member, nil, http.StatusOK))).NotTo(ContainSubstring(`"last_used_at":null`))
	}).Should(Succeed())
	before := look(g, src, src.member)
	// The run and its Secret are not part of the org's state; the pod goes before the backup.
	objs := backup(g, src)
	src.stop()
	veleroOrder(objs)

	for _, withStatus := range []bool{false, true} {
		t.Run(fmt.Sprintf("status restored %v", withStatus), func(t *testing.T) {
			g := newG(t)
			// Namespaces, Secrets and ServiceAccounts come back before the operator
			// does (Velero restores them before Pods); everything else with it running.
			early := func(r string) bool { return r == "namespaces" || r == "secrets" || r == "serviceaccounts" }
			dst := startCluster(t, g, func(cl *cluster) { restore(g, cl, objs, early, withStatus) })
			defer dst.stop()
			restore(g, dst, objs, func(r string) bool { return !early(r) }, withStatus)
			settled(g, dst)
			token := dst.memberToken(g)
			after := look(g, dst, token)

			if withStatus {
				g.Expect(after.Board).To(Equal(before.Board), "the public read, byte for byte")
			} else if d := cmp.Diff(withoutLost(t, before.Board), withoutLost(t, after.Board)); d != "" {
				t.Errorf("the public read, apart from what is lost without status (-before +after):\n%s", d)
			}
			for id, h := range before.Histories {
				g.Expect(after.Histories).To(HaveKey(id))
				if withStatus {
					g.Expect(after.Histories[id]).To(Equal(h), "history of row %s", id)
				}
			}
			// Every record, org_id included: the org's id came back on its Namespace.
			g.Expect(withoutLastUse(t, after.Secrets, withStatus)).To(Equal(withoutLastUse(t, before.Secrets, withStatus)))
			g.Expect(withoutLastUse(t, after.Registry, withStatus)).To(Equal(withoutLastUse(t, before.Registry, withStatus)))
			g.Expect(deliver(g, dst, token)).To(Equal(delivered))
		})
	}
}

// withoutLost is a read with what a restore without status does not keep set aside: a
// row's updated_at, which falls back to its creation time (docs/operations.md, "What
// is lost without status").
func withoutLost(t *testing.T, body string) map[string]any {
	var read map[string]any
	if err := json.Unmarshal([]byte(body), &read); err != nil {
		t.Fatal(err)
	}
	for _, r := range read["rows"].([]any) {
		row := r.(map[string]any)
		row["updated_at"] = row["created_at"]
	}
	return read
}

// withoutLastUse blanks, without status, last_used_at, which is status
// (docs/operations.md, "Backup and restore").
func withoutLastUse(t *testing.T, body string, withStatus bool) string {
	var v map[string][]map[string]any
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatal(err)
	}
	for _, recs := range v {
		for _, r := range recs {
			if !withStatus {
				r["last_used_at"] = nil
			}
		}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

var (
	authenticationTokenRequest = authenticationv1.TokenRequest{}
	// The member may start runs (Pods) in the org.
	rbacRole = rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: org, Name: "runs"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create"}}},
	}
	rbacBinding = rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: org, Name: "runs"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "runs"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: org, Name: member}},
	}
)
