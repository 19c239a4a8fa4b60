package controllers_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"

	. "github.com/onsi/gomega"
	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"podium.dev/podium/internal/scheme"
	"podium.dev/podium/internal/testenv"
)

// argoHealthScript is the Argo CD health check docs/gitops.md tells Argo users to add,
// read from the document so that what is tested is what is published.
var argoHealthScript = sync.OnceValues(func() (string, error) {
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "docs", "gitops.md"))
	if err != nil {
		return "", err
	}
	_, rest, ok := strings.Cut(string(b), "resource.customizations.health.hub.podium.dev_Leaderboard: &podium-health |\n")
	if !ok {
		return "", os.ErrNotExist
	}
	var lines []string
	for _, l := range strings.Split(rest, "\n") {
		if !strings.HasPrefix(l, "    ") {
			break
		}
		lines = append(lines, strings.TrimPrefix(l, "    "))
	}
	return strings.Join(lines, "\n"), nil
})

// argoHealth runs the documented check on obj as the apiserver serves it, in
// gopher-lua (the Lua VM Argo CD runs health checks in), with obj converted to Lua
// tables as Argo CD does, and returns the health status it computes.
func argoHealth(g Gomega, obj client.Object) string {
	script, err := argoHealthScript()
	g.Expect(err).NotTo(HaveOccurred(), "the Argo CD health check in docs/gitops.md")
	gvk, err := apiutil.GVKForObject(obj, scheme.Scheme)
	g.Expect(err).NotTo(HaveOccurred())
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), u)).To(Succeed())

	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	for _, lib := range []struct {
		name string
		fn   lua.LGFunction
	}{{lua.LoadLibName, lua.OpenPackage}, {lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.StringLibName, lua.OpenString}} {
		L.Push(L.NewFunction(lib.fn))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	L.SetGlobal("obj", toLua(L, u.Object))
	g.Expect(L.DoString(script)).To(Succeed())
	ret, ok := L.Get(-1).(*lua.LTable)
	g.Expect(ok).To(BeTrue(), "the check returns a table")
	return ret.RawGetString("status").String()
}

func toLua(L *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case map[string]any:
		t := L.NewTable()
		for k, x := range v {
			t.RawSetString(k, toLua(L, x))
		}
		return t
	case []any:
		t := L.NewTable()
		for i, x := range v {
			t.RawSetInt(i+1, toLua(L, x))
		}
		return t
	case string:
		return lua.LString(v)
	case bool:
		return lua.LBool(v)
	case int64:
		return lua.LNumber(v)
	case float64:
		return lua.LNumber(v)
	}
	return lua.LNil
}

// argoFor is the Argo CD health the documented check must give for a kstatus status.
var argoFor = map[status.Status]string{
	status.CurrentStatus:    "Healthy",
	status.InProgressStatus: "Progressing",
	status.FailedStatus:     "Degraded",
}
