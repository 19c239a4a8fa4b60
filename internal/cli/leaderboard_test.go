package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/testenv"
)

// boardJSON is the part of `show --json` the tests read.
type boardJSON struct {
	ID                string   `json:"id"`
	Package           string   `json:"package"`
	PackageID         string   `json:"package_id"`
	Name              string   `json:"name"`
	Title             string   `json:"title"`
	Description       *string  `json:"description"`
	Visibility        string   `json:"visibility"`
	DatasetVersionIDs []string `json:"dataset_version_ids"`
	UpdatedAt         string   `json:"updated_at"`
	Ready             bool     `json:"ready"`
	Rows              int      `json:"rows"`
}

// show reads a board with `show --json` (the read's payload: {leaderboard, rows,
// pagination}).
func show(home, ref string) boardJSON {
	GinkgoHelper()
	var p struct{ Leaderboard boardJSON }
	Expect(json.Unmarshal([]byte(ok(home, "hub", "leaderboard", "show", ref, "--json")), &p)).To(Succeed())
	return p.Leaderboard
}

// makeBoard writes an init file and creates the board from it.
func makeBoard(org, home, name string, extra ...string) boardJSON {
	GinkgoHelper()
	cfgFile := filepath.Join(home, name+".yaml")
	ok(home, "hub", "leaderboard", "init", "--package", org+"/bench", "--name", name, "--title", "Board "+name, "--output", cfgFile)
	ok(home, append([]string{"hub", "leaderboard", "create", "--config", cfgFile}, extra...)...)
	return show(home, org+"/bench/"+name)
}

func rowsYAML(n int, reward func(i int) string) string {
	var b strings.Builder
	b.WriteString("rows:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - metadata: {agent: agent-%d}\n    metrics: {reward: %s}\n", i, reward(i))
	}
	return b.String()
}

var _ = Describe("podium basics", func() {
	It("prints its version and exits 2 on usage errors", func() {
		home := GinkgoT().TempDir()
		Expect(ok(home, "version")).To(HavePrefix("podium "))
		for _, args := range [][]string{
			{"--bogus"},
			{"nosuchcommand"},
			{"hub", "leaderboard", "show"},
			{"hub", "leaderboard", "row", "list", "x/y/z", "--limit", "1001"},
			{"hub", "leaderboard", "row", "list", "x/y/z", "--limit", "0"},
			{"hub", "leaderboard", "row", "trial", "set", "8b0d7f44-9c0e-4a8e-9d43-53a1e8f4a001", "--clear", "--trial-id", "8b0d7f44-9c0e-4a8e-9d43-53a1e8f4a002"},
			{"hub", "leaderboard", "row", "trial", "add", "8b0d7f44-9c0e-4a8e-9d43-53a1e8f4a001"},
			{"hub", "leaderboard", "init", "--package", "o/d", "--name", "n", "--title", "t", "--output", "x.txt"},
			{"hub", "leaderboard", "export", "o/d/n", "--output", "x.toml"},
		} {
			r := podium(home, args...)
			Expect(r.code).To(Equal(2), "%v\n%s", args, r)
			Expect(r.out).To(BeEmpty())
			Expect(r.err).To(ContainSubstring("Error:"))
		}
	})

	It("prints errors as the envelope on stderr with --json", func() {
		org, home := newOrg("cli-json")
		r := podium(home, "hub", "leaderboard", "show", org+"/bench/missing", "--json")
		Expect(r.code).To(Equal(1))
		Expect(r.out).To(BeEmpty())
		var env struct {
			Error struct{ Code, Message string }
		}
		Expect(json.Unmarshal([]byte(r.err), &env)).To(Succeed(), r.err)
		Expect(env.Error.Code).To(Equal("not_found"))
	})

	It("records, shows and forgets the login", func() {
		org, home := newOrg("cli-auth")
		out := ok(home, "auth", "login", "--kubeconfig", kubeconfig, "--org", org, "--endpoint", "http://127.0.0.1:1")
		Expect(out).To(ContainSubstring("podium-admin"))
		path := filepath.Join(home, "podium", "config.yaml")
		fi, err := os.Stat(path)
		Expect(err).NotTo(HaveOccurred())
		Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o600)))
		raw, _ := os.ReadFile(path)
		Expect(string(raw)).To(And(ContainSubstring("org: "+org), ContainSubstring("endpoint: http://127.0.0.1:1"), ContainSubstring("kubeconfig: "+kubeconfig)))

		status := ok(home, "auth", "status")
		Expect(status).To(And(ContainSubstring("podium-admin"), ContainSubstring(org)))

		// The recorded org is the default: a slug-less list shows this org's boards only.
		makeBoard(org, home, "auth_board")
		Expect(ok(home, "hub", "leaderboard", "list", "--quiet")).To(Equal(org + "/bench/auth_board\n"))

		Expect(ok(home, "auth", "logout")).To(ContainSubstring("Logged out"))
		Expect(path).NotTo(BeAnExistingFile())
		Expect(podium(home, "auth", "login", "--context", "nope").code).To(Equal(2))
		Expect(path).NotTo(BeAnExistingFile())
	})
})

var _ = Describe("global flags", func() {
	It("honours --kubeconfig, --context and --org", func() {
		org, home := newOrg("cli-flags")
		other, _ := newOrg("cli-flags-other")
		b := makeBoard(org, home, "main")
		empty := write(home, "empty-kubeconfig", "apiVersion: v1\nkind: Config\n")

		// An explicit --kubeconfig wins over KUBECONFIG.
		cmdEnv := func(args ...string) result {
			return podium(home, append([]string{"--kubeconfig", kubeconfig}, args...)...)
		}
		Expect(cmdEnv("hub", "leaderboard", "show", b.ID).code).To(Equal(0))
		r := podium(home, "--kubeconfig", empty, "hub", "leaderboard", "show", b.ID)
		Expect(r.code).To(Equal(1))

		r = podium(home, "--context", "nope", "hub", "leaderboard", "show", b.ID)
		Expect(r.code).To(Equal(1))
		Expect(r.err).To(ContainSubstring("nope"))

		// Ids are looked up in --org only when given.
		Expect(podium(home, "--org", org, "hub", "leaderboard", "show", b.ID).code).To(Equal(0))
		r = podium(home, "--org", other, "hub", "leaderboard", "show", b.ID)
		Expect(r.code).To(Equal(1))
		Expect(r.err).To(ContainSubstring("not found"))
		Expect(ok(home, "--org", other, "hub", "leaderboard", "list", "--quiet")).To(BeEmpty())
	})
})

var _ = Describe("leaderboard init, create, list, show", func() {
	It("writes the example docs/cli.md describes and never overwrites without --force", func() {
		org, home := newOrg("cli-init")
		y := filepath.Join(home, "lb.yaml")
		ok(home, "hub", "leaderboard", "init", "--package", org+"/bench", "--name", "main", "--title", "Main", "--output", y)
		raw, err := os.ReadFile(y)
		Expect(err).NotTo(HaveOccurred())
		s := string(raw)
		Expect(s).To(And(ContainSubstring("accessor: metadata.agent"), ContainSubstring("type: text"),
			ContainSubstring("accessor: metrics.reward"), ContainSubstring("type: number"),
			ContainSubstring("direction: desc"), ContainSubstring("nulls: last")))
		r := podium(home, "hub", "leaderboard", "init", "--package", org+"/bench", "--name", "main", "--title", "Other", "--output", y)
		Expect(r.code).To(Equal(1))
		Expect(r.err).To(ContainSubstring("--force"))
		after, _ := os.ReadFile(y)
		Expect(string(after)).To(Equal(s))
		ok(home, "hub", "leaderboard", "init", "--package", org+"/bench", "--name", "main", "--title", "Other", "--output", y, "--force")

		j := filepath.Join(home, "lb.json")
		ok(home, "hub", "leaderboard", "init", "--package", org+"/bench", "--name", "main", "--title", "Main", "--output", j, "--format", "json")
		var f map[string]any
		raw, _ = os.ReadFile(j)
		Expect(json.Unmarshal(raw, &f)).To(Succeed())
		Expect(f).To(HaveKeyWithValue("rank_by", ConsistOf(HaveKeyWithValue("accessor", "metrics.reward"))))
	})

	It("creates a board with rows and visibility, and lists and shows it", func() {
		org, home := newOrg("cli-create")
		cfgFile := filepath.Join(home, "lb.yaml")
		ok(home, "hub", "leaderboard", "init", "--package", org+"/bench", "--name", "swe_bench.v1", "--title", "SWE", "--output", cfgFile)
		rows := write(home, "rows.yaml", rowsYAML(3, func(i int) string { return fmt.Sprint(i) }))
		out := ok(home, "hub", "leaderboard", "create", "--config", cfgFile, "--rows", rows, "--visibility", "public")
		Expect(out).To(ContainSubstring(org + "/bench/swe_bench.v1"))

		slug := org + "/bench/swe_bench.v1"
		b := show(home, slug)
		Expect(b.Visibility).To(Equal("public"))
		Expect(b.Title).To(Equal("SWE"))
		Expect(show(home, b.ID).Name).To(Equal("swe_bench.v1"))
		// The object name is derived (a slug may hold "_"), stable, and valid.
		var lb hubv1alpha1.Leaderboard
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: org, Name: "swe-bench-v1-" + mustSuffix(org, b.ID)}, &lb)).To(Succeed())
		// Omitted dataset-version fields associate every version existing at creation.
		Eventually(func() []string { return show(home, slug).DatasetVersionIDs }).Should(HaveLen(2))

		Expect(ok(home, "hub", "leaderboard", "list", org+"/bench", "--quiet")).To(Equal(slug + "\n"))
		var ds hubv1alpha1.Dataset
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: org, Name: "bench"}, &ds)).To(Succeed())
		Expect(ok(home, "hub", "leaderboard", "list", string(ds.UID), "--quiet")).To(Equal(slug + "\n"))
		table := ok(home, "hub", "leaderboard", "list", org+"/bench")
		Expect(table).To(And(HavePrefix("SLUG"), ContainSubstring(b.ID)))
		Expect(ok(home, "hub", "leaderboard", "list", org+"/bench", "--no-headers")).NotTo(ContainSubstring("SLUG"))
		var listed struct{ Items []boardJSON }
		Expect(json.Unmarshal([]byte(ok(home, "hub", "leaderboard", "list", org+"/bench", "--json")), &listed)).To(Succeed())
		Expect(listed.Items).To(ConsistOf(HaveField("ID", b.ID)))
		Expect(ok(home, "hub", "leaderboard", "show", slug)).To(ContainSubstring("metrics.reward desc (nulls last)"))

		// Rows were created in the same operation, labelled and owned, and the command
		// returned once their ids were findable (status.id).
		var rl hubv1alpha1.LeaderboardRowList
		Expect(k8s.List(ctx, &rl, client.InNamespace(org))).To(Succeed())
		Expect(rl.Items).To(HaveLen(3))
		for _, r := range rl.Items {
			Expect(r.Status.ID).To(Equal(string(r.UID)))
			Expect(r.Labels).To(HaveKeyWithValue(hubv1alpha1.LabelLeaderboard, lb.Name))
			Expect(r.OwnerReferences).To(ConsistOf(HaveField("UID", lb.UID)))
		}
		// Creating the same board again fails and leaves the first alone.
		Expect(podium(home, "hub", "leaderboard", "create", "--config", cfgFile).code).To(Equal(1))
	})

	It("refuses unknown keys naming the key and line, and bad values naming the field", func() {
		org, home := newOrg("cli-strict")
		bad := write(home, "bad.yaml", "package: "+org+"/bench\nname: x\ntitle: X\ncolumns:\n  - id: a\n    header: A\n    acessor: metadata.a\n    type: text\n")
		r := podium(home, "hub", "leaderboard", "create", "--config", bad)
		Expect(r.code).To(Equal(1))
		Expect(r.err).To(And(ContainSubstring("bad.yaml:7"), ContainSubstring("columns[0].acessor"), ContainSubstring("unknown key")))

		badJSON := write(home, "bad.json", `{"package": "`+org+`/bench", "name": "x",`+"\n"+`"title": 5}`)
		r = podium(home, "hub", "leaderboard", "create", "--config", badJSON)
		Expect(r.code).To(Equal(1))
		Expect(r.err).To(And(ContainSubstring("bad.json:2"), ContainSubstring("title"), ContainSubstring("string")))

		badDir := write(home, "dir.yaml", "package: "+org+"/bench\nname: x\ntitle: X\nrank_by:\n  - accessor: metrics.r\n    direction: up\n")
		r = podium(home, "hub", "leaderboard", "create", "--config", badDir)
		Expect(r.code).To(Equal(1))
		Expect(r.err).To(ContainSubstring("rank_by[0].direction"))
		var list hubv1alpha1.LeaderboardList
		Expect(k8s.List(ctx, &list, client.InNamespace(org))).To(Succeed())
		Expect(list.Items).To(BeEmpty())
	})
})

// mustSuffix returns the hash suffix of the board's object name, read back by id.
func mustSuffix(org, id string) string {
	GinkgoHelper()
	var list hubv1alpha1.LeaderboardList
	Expect(k8s.List(ctx, &list, client.InNamespace(org), client.MatchingLabels{hubv1alpha1.LabelID: id})).To(Succeed())
	Expect(list.Items).To(HaveLen(1))
	name := list.Items[0].Name
	return name[strings.LastIndex(name, "-")+1:]
}

var _ = Describe("an org owner who is not a cluster admin", func() {
	It("works in their org with the shipped podium-org-owner role", func() {
		org, home := newOrg("cli-owner")
		alice, err := testEnv.AddUser(envtest.User{Name: "alice-" + org}, cfg)
		Expect(err).NotTo(HaveOccurred())
		kc, err := alice.KubeConfig()
		Expect(err).NotTo(HaveOccurred())
		aliceKC := write(home, "alice-kubeconfig", string(kc))
		role := &rbacv1.ClusterRole{}
		raw, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "rbac", "org_roles.yaml"))
		Expect(err).NotTo(HaveOccurred())
		for _, doc := range strings.Split(string(raw), "\n---\n") {
			if strings.Contains(doc, "name: podium-org-owner") {
				Expect(yaml.Unmarshal([]byte(doc), role)).To(Succeed())
			}
		}
		Expect(role.Rules).NotTo(BeEmpty())
		role.Name = "podium-org-owner-" + org
		Expect(k8s.Create(ctx, role)).To(Succeed())
		DeferCleanup(func() { _ = k8s.Delete(context.Background(), role) })
		Expect(k8s.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: org, Name: "alice-owner"},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name},
			Subjects:   []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: "alice-" + org}},
		})).To(Succeed())

		ok(home, "auth", "login", "--kubeconfig", aliceKC)
		cfgFile := filepath.Join(home, "lb.yaml")
		ok(home, "hub", "leaderboard", "init", "--package", org+"/bench", "--name", "main", "--title", "Main", "--output", cfgFile)
		ok(home, "hub", "leaderboard", "create", "--config", cfgFile, "--rows", write(home, "r.yaml", rowsYAML(3, func(i int) string { return fmt.Sprint(i) })))
		slug := org + "/bench/main"
		ids := strings.Fields(ok(home, "hub", "leaderboard", "row", "list", slug, "--quiet"))
		Expect(ids).To(HaveLen(3))
		// Without an org, an id is searched in the context's namespace only, and the
		// error says how to widen it.
		r := podium(home, "hub", "leaderboard", "row", "show", ids[0])
		Expect(r.code).To(Equal(1))
		Expect(r.err).To(ContainSubstring("--org"))
		ok(home, "auth", "login", "--kubeconfig", aliceKC, "--org", org)
		ok(home, "hub", "leaderboard", "row", "show", ids[0])
		ok(home, "hub", "leaderboard", "row", "update", ids[0], "--status", "hide")
		ok(home, "hub", "leaderboard", "row", "delete", ids[1], "--yes")
		ok(home, "hub", "leaderboard", "update", slug, "--title", "Renamed")
		// Another org is out of reach.
		other, _ := newOrg("cli-owner-other")
		r = podium(home, "hub", "leaderboard", "list", other+"/bench")
		Expect(r.code).To(Equal(1))
		Expect(r.err).To(ContainSubstring("forbidden"))
	})
})
