package metrics_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"text/template"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql/parser"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/metrics"
	"podium.dev/podium/internal/testenv"
)

// prometheusRule is the part of a monitoring.coreos.com/v1 PrometheusRule that
// Prometheus loads: its spec is a rule group file (Prometheus' rulefmt).
type prometheusRule struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Spec       struct {
		Groups []struct {
			Name     string `json:"name"`
			Interval string `json:"interval,omitempty"`
			Rules    []rule `json:"rules"`
		} `json:"groups"`
	} `json:"spec"`
}

type rule struct {
	Alert       string            `json:"alert,omitempty"`
	Record      string            `json:"record,omitempty"`
	Expr        string            `json:"expr"`
	For         string            `json:"for,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// dashboard is the part of a Grafana dashboard JSON that holds queries.
type dashboard struct {
	Title  string `json:"title"`
	UID    string `json:"uid"`
	Panels []struct {
		Title   string `json:"title"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
	Templating struct {
		List []struct {
			Name       string `json:"name"`
			Definition string `json:"definition"`
		} `json:"list"`
	} `json:"templating"`
}

// synthesized are series Prometheus makes itself for each target, not the operator.
var synthesized = []string{"up"}

// templateFuncs are the names of Prometheus' alert template functions the annotations
// use; parsing needs them declared (text/template), not implemented.
var templateFuncs = template.FuncMap{
	"humanize": fmt.Sprint, "humanizePercentage": fmt.Sprint, "humanizeDuration": fmt.Sprint,
}

// templateVars are the variables Prometheus defines before an alert's annotation
// templates (as its rule loader does when it checks them).
const templateVars = "{{$labels := .Labels}}{{$externalLabels := .ExternalLabels}}{{$externalURL := .ExternalURL}}{{$value := .Value}}"

func repoFile(parts ...string) []byte {
	data, err := os.ReadFile(filepath.Join(append([]string{testenv.RepoRoot()}, parts...)...))
	Expect(err).NotTo(HaveOccurred())
	return data
}

// selectors returns the vector selectors of a PromQL expression.
func selectors(expr string) ([]*parser.VectorSelector, error) {
	e, err := parser.ParseExpr(expr)
	if err != nil {
		return nil, err
	}
	var out []*parser.VectorSelector
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			out = append(out, vs)
		}
		return nil
	})
	return out, nil
}

// exported are the series names a scrape holds (a histogram's _bucket, _count and _sum)
// with the label names each carries.
func exported(fams map[string]*dto.MetricFamily) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	add := func(name string, labels []*dto.LabelPair, extra ...string) {
		if out[name] == nil {
			out[name] = map[string]bool{}
		}
		for _, l := range labels {
			out[name][l.GetName()] = true
		}
		for _, l := range extra {
			out[name][l] = true
		}
	}
	for name, f := range fams {
		for _, m := range f.Metric {
			if f.GetType() == dto.MetricType_HISTOGRAM {
				add(name+"_bucket", m.Label, "le")
				add(name+"_count", m.Label)
				add(name+"_sum", m.Label)
				continue
			}
			add(name, m.Label)
		}
	}
	return out
}

// checkSelectors fails g when a selector names a series the operator does not export or
// matches on a label its series do not carry (a typo would make a rule never fire).
func checkSelectors(g Gomega, where string, vss []*parser.VectorSelector, have map[string]map[string]bool) {
	for _, vs := range vss {
		name := vs.Name
		if slices.Contains(synthesized, name) {
			continue
		}
		labels, ok := have[name]
		g.Expect(ok).To(BeTrue(), "%s: %s is not exported by the operator", where, name)
		for _, m := range vs.LabelMatchers {
			if m.Name == model.MetricNameLabel {
				continue
			}
			g.Expect(labels).To(HaveKey(m.Name), "%s: %s has no label %q", where, name, m.Name)
		}
	}
}

// anchors are the GitHub anchors of a Markdown file's headings.
func anchors(md []byte) map[string]bool {
	out := map[string]bool{}
	drop := regexp.MustCompile(`[^a-z0-9 _-]`)
	for _, line := range strings.Split(string(md), "\n") {
		if t, ok := strings.CutPrefix(line, "#"); ok {
			t = strings.TrimLeft(t, "#")
			out[strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(strings.TrimSpace(t)), ""), " ", "-")] = true
		}
	}
	return out
}

// populate makes one object of each kind the gauges count, so that every family is in
// the scrape: a run (and its run Secret), a HostedSecret, a board and a row.
func populate() {
	ns := newNamespace("populate")
	p := newPerson(ns, "carol")
	store(p, map[string]any{"env_var": "OPENAI_API_KEY", "value": "sk-openai-populate-0000000000001"})
	Eventually(func() error {
		_, err := p.CS.CoreV1().Pods(ns).Create(ctx, pod("OPENAI_API_KEY"), metav1.CreateOptions{})
		return err
	}).Should(Succeed())
	lb := &hubv1alpha1.Leaderboard{}
	fromSample("hub_v1alpha1_leaderboard_public.yaml", lb, ns)
	lb.Spec.Package = ns + "/terminal-bench"
	Expect(k8sClient.Create(ctx, lb)).To(Succeed())
	Expect(k8sClient.Create(ctx, &hubv1alpha1.LeaderboardRow{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "row"},
		Spec:       hubv1alpha1.LeaderboardRowSpec{Leaderboard: lb.Name},
	})).To(Succeed())
}

var _ = Describe("The alerts (config/prometheus/rules.yaml)", func() {
	var rules prometheusRule
	BeforeEach(func() {
		rules = prometheusRule{}
		Expect(yaml.UnmarshalStrict(repoFile("config", "prometheus", "rules.yaml"), &rules)).To(Succeed())
	})

	It("load as Prometheus loads a rule group file", func() {
		Expect(rules.APIVersion).To(Equal("monitoring.coreos.com/v1"))
		Expect(rules.Kind).To(Equal("PrometheusRule"))
		Expect(rules.Spec.Groups).NotTo(BeEmpty())
		runbook := anchors(repoFile("docs", "operations.md"))
		groups, alerts := map[string]bool{}, map[string]bool{}
		for _, g := range rules.Spec.Groups {
			Expect(g.Name).NotTo(BeEmpty())
			Expect(groups).NotTo(HaveKey(g.Name), "group %s twice", g.Name)
			groups[g.Name] = true
			Expect(g.Rules).NotTo(BeEmpty(), "group %s", g.Name)
			for _, r := range g.Rules {
				Expect(r.Record).To(BeEmpty(), "only alerts here: %+v", r)
				Expect(r.Alert).NotTo(BeEmpty(), "a rule without a name: %+v", r)
				Expect(model.UTF8Validation.IsValidMetricName(r.Alert)).To(BeTrue())
				Expect(alerts).NotTo(HaveKey(r.Alert), "alert %s twice", r.Alert)
				alerts[r.Alert] = true
				_, err := parser.ParseExpr(r.Expr)
				Expect(err).NotTo(HaveOccurred(), "alert %s", r.Alert)
				if r.For != "" {
					_, err := model.ParseDuration(r.For)
					Expect(err).NotTo(HaveOccurred(), "alert %s: for", r.Alert)
				}
				Expect(r.Labels).To(HaveKeyWithValue("severity", BeElementOf("critical", "warning")), "alert %s", r.Alert)
				for k, v := range r.Annotations {
					_, err := template.New(k).Funcs(templateFuncs).Parse(templateVars + v)
					Expect(err).NotTo(HaveOccurred(), "alert %s: annotation %s", r.Alert, k)
				}
				Expect(r.Annotations).To(HaveKey("summary"), "alert %s", r.Alert)
				Expect(r.Annotations).To(HaveKey("description"), "alert %s", r.Alert)
				url := r.Annotations["runbook_url"]
				_, anchor, ok := strings.Cut(url, "docs/operations.md#")
				Expect(ok).To(BeTrue(), "alert %s: runbook_url %q is not a section of docs/operations.md", r.Alert, url)
				Expect(anchor).To(Equal(strings.ToLower(r.Alert)), "alert %s: its runbook section is named after it", r.Alert)
				Expect(runbook).To(HaveKey(anchor), "alert %s: docs/operations.md has no section %q", r.Alert, anchor)
			}
		}
	})

	It("refuses an expression that does not parse and a metric the operator does not export", func() {
		// The checks below can fail: a broken expression and a misspelt name.
		_, err := selectors(`sum(rate(podium_http_requests_total[5m]) > `)
		Expect(err).To(HaveOccurred())
		vss, err := selectors(`podium_hostedsecret{reason="x"}`)
		Expect(err).NotTo(HaveOccurred())
		fams, _ := scrape(Default)
		g := NewGomega(func(string, ...int) { panic("failed") })
		Expect(func() { checkSelectors(g, "test", vss, exported(fams)) }).To(Panic())
	})

	It("use only metrics and labels the operator exports", func() {
		populate()
		Eventually(func(g Gomega) {
			fams, _ := scrape(g)
			have := exported(fams)
			for _, grp := range rules.Spec.Groups {
				for _, r := range grp.Rules {
					vss, err := selectors(r.Expr)
					g.Expect(err).NotTo(HaveOccurred())
					checkSelectors(g, "alert "+r.Alert, vss, have)
				}
			}
		}).Should(Succeed())
	})
})

var _ = Describe("The dashboard (config/prometheus/dashboards/podium.json)", func() {
	It("parses, and queries only metrics and labels the operator exports", func() {
		var d dashboard
		dec := json.NewDecoder(strings.NewReader(string(repoFile("config", "prometheus", "dashboards", "podium.json"))))
		Expect(dec.Decode(&d)).To(Succeed())
		Expect(d.Title).NotTo(BeEmpty())
		Expect(d.UID).NotTo(BeEmpty())
		Expect(d.Panels).NotTo(BeEmpty())
		type query struct{ where, expr string }
		var queries []query
		titles := map[string]bool{}
		for _, p := range d.Panels {
			Expect(titles).NotTo(HaveKey(p.Title), "two panels named %q", p.Title)
			titles[p.Title] = true
			Expect(p.Targets).NotTo(BeEmpty(), "panel %q has no query", p.Title)
			for _, t := range p.Targets {
				queries = append(queries, query{"panel " + p.Title, t.Expr})
			}
		}
		// A variable's label_values(<selector>, <label>) query: its selector is PromQL.
		labelValues := regexp.MustCompile(`^label_values\((.+),\s*([a-zA-Z_][a-zA-Z0-9_]*)\)$`)
		for _, v := range d.Templating.List {
			if v.Definition == "" {
				continue
			}
			m := labelValues.FindStringSubmatch(v.Definition)
			Expect(m).NotTo(BeNil(), "variable %s: %q", v.Name, v.Definition)
			queries = append(queries, query{"variable " + v.Name, m[1] + `{` + m[2] + `!=""}`})
		}
		parsed := map[string][]*parser.VectorSelector{}
		names := map[string]bool{}
		for _, q := range queries {
			vss, err := selectors(q.expr)
			Expect(err).NotTo(HaveOccurred(), "%s: %s", q.where, q.expr)
			parsed[q.where+": "+q.expr] = vss
			for _, vs := range vss {
				names[vs.Name] = true
			}
		}
		// Every domain metric is on the dashboard.
		var missing []string
		for _, n := range []string{metrics.HostedSecretsName, metrics.LeaderboardsName, metrics.LeaderboardRowsName,
			metrics.RunSecretsName, metrics.CertificateExpiryName, metrics.SecretsDeliveredName,
			metrics.SecretsNotDeliveredName, metrics.AdmissionDurationName + "_bucket"} {
			if !names[n] {
				missing = append(missing, n)
			}
		}
		sort.Strings(missing)
		Expect(missing).To(BeEmpty(), "metrics the dashboard does not show")

		populate()
		Eventually(func(g Gomega) {
			fams, _ := scrape(g)
			have := exported(fams)
			for where, vss := range parsed {
				checkSelectors(g, where, vss, have)
			}
		}).Should(Succeed())
	})
})
