package hub

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/apierr"
)

// Annotations that describe one cluster's copy of an object and must not travel in a
// manifest committed to Git: the recorded id and creation time are the cluster's (only a
// restore identity may set them, docs/operations.md "Backup and restore"; applied by
// anyone else they would be refused and the object's id reissued).
var localAnnotations = []string{"kubectl.kubernetes.io/last-applied-configuration", hubv1alpha1.AnnotationID, hubv1alpha1.AnnotationCreatedAt}

// manifestBoard is a board as a manifest holds it: what the user declares, nothing the
// cluster assigned (uid, resourceVersion, status, the id label).
func manifestBoard(lb *hubv1alpha1.Leaderboard) *hubv1alpha1.Leaderboard {
	out := &hubv1alpha1.Leaderboard{Spec: *lb.Spec.DeepCopy()}
	out.TypeMeta, out.ObjectMeta = manifestMeta("Leaderboard", lb)
	return out
}

// manifestRow is a row as a manifest holds it. The owner reference is dropped (it holds
// the board's uid, which another cluster does not share); the leaderboard label and
// spec.leaderboard keep the link.
func manifestRow(r *hubv1alpha1.LeaderboardRow) *hubv1alpha1.LeaderboardRow {
	out := &hubv1alpha1.LeaderboardRow{Spec: *r.Spec.DeepCopy()}
	out.TypeMeta, out.ObjectMeta = manifestMeta("LeaderboardRow", r)
	return out
}

// manifestMeta is the metadata of an object of kind in a manifest: its name and
// namespace, its labels and annotations without the cluster's own.
func manifestMeta(kind string, in metav1.Object) (metav1.TypeMeta, metav1.ObjectMeta) {
	return metav1.TypeMeta{APIVersion: hubv1alpha1.GroupVersion.String(), Kind: kind},
		metav1.ObjectMeta{Name: in.GetName(), Namespace: in.GetNamespace(), Labels: cleanLabels(in.GetLabels()), Annotations: cleanAnnotations(in.GetAnnotations())}
}

func cleanLabels(in map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range in {
		if k != hubv1alpha1.LabelID {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func cleanAnnotations(in map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range in {
		out[k] = v
	}
	for _, k := range localAnnotations {
		delete(out, k)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// stripStatus marshals a manifest object without its (empty) status and
// creationTimestamp, which would make GitOps tools see a diff.
func stripStatus(obj any) (map[string]any, error) {
	j, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(j, &m); err != nil {
		return nil, err
	}
	delete(m, "status")
	if md, ok := m["metadata"].(map[string]any); ok {
		delete(md, "creationTimestamp")
	}
	return m, nil
}

// RenderManifest writes a board and rows as Kubernetes manifests: YAML documents, or a
// JSON v1 List.
func RenderManifest(lb *hubv1alpha1.Leaderboard, rows []hubv1alpha1.LeaderboardRow, f Format) ([]byte, error) {
	objs := []any{manifestBoard(lb)}
	for i := range rows {
		objs = append(objs, manifestRow(&rows[i]))
	}
	var items []map[string]any
	for _, o := range objs {
		m, err := stripStatus(o)
		if err != nil {
			return nil, err
		}
		items = append(items, m)
	}
	if f == FormatJSON {
		return Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items}, FormatJSON)
	}
	var b bytes.Buffer
	for i, it := range items {
		y, err := Marshal(it, FormatYAML)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		b.Write(y)
	}
	return b.Bytes(), nil
}

// Manifest is a board with rows read from manifests (what `export --format manifest`
// writes).
type Manifest struct {
	Board *hubv1alpha1.Leaderboard
	Rows  []hubv1alpha1.LeaderboardRow
}

// isManifest says whether a document is a Kubernetes object (it has a kind).
func isManifest(d document) bool {
	var probe struct {
		Kind       string `json:"kind"`
		APIVersion string `json:"apiVersion"`
	}
	_ = json.Unmarshal(d.json, &probe)
	return probe.Kind != "" && probe.APIVersion != ""
}

// parseManifest reads Leaderboard and LeaderboardRow documents (or a v1 List of them),
// strictly: unknown fields are refused naming the field.
func parseManifest(docs []document) (*Manifest, error) {
	var objs []document
	for _, d := range docs {
		var head struct {
			Kind  string            `json:"kind"`
			Items []json.RawMessage `json:"items"`
		}
		_ = json.Unmarshal(d.json, &head)
		if head.Kind == "List" {
			for _, it := range head.Items {
				objs = append(objs, document{file: d.file, json: it, node: nil})
			}
			continue
		}
		objs = append(objs, d)
	}
	m := &Manifest{}
	gv := hubv1alpha1.GroupVersion.String()
	for i, d := range objs {
		var tm struct {
			Kind       string `json:"kind"`
			APIVersion string `json:"apiVersion"`
		}
		_ = json.Unmarshal(d.json, &tm)
		where := fmt.Sprintf("%s: object %d (%s)", d.file, i+1, tm.Kind)
		if tm.APIVersion != gv {
			return nil, apierr.BadRequest("apiVersion", "%s: apiVersion must be %s, not %q", where, gv, tm.APIVersion)
		}
		dec := json.NewDecoder(bytes.NewReader(d.json))
		dec.DisallowUnknownFields()
		switch tm.Kind {
		case "Leaderboard":
			if m.Board != nil {
				return nil, apierr.BadRequest("kind", "%s: a file holds one Leaderboard", where)
			}
			m.Board = &hubv1alpha1.Leaderboard{}
			if err := dec.Decode(m.Board); err != nil {
				return nil, manifestDecodeError(where, err)
			}
		case "LeaderboardRow":
			var r hubv1alpha1.LeaderboardRow
			if err := dec.Decode(&r); err != nil {
				return nil, manifestDecodeError(where, err)
			}
			m.Rows = append(m.Rows, r)
		default:
			return nil, apierr.BadRequest("kind", "%s: kind must be Leaderboard or LeaderboardRow", where)
		}
	}
	if m.Board == nil {
		return nil, apierr.BadRequest("kind", "%s: no Leaderboard in the file", docs[0].file)
	}
	for i, r := range m.Rows {
		if r.Spec.Leaderboard != m.Board.Name {
			return nil, apierr.BadRequest("spec.leaderboard", "%s: row %d belongs to %q, not to the file's leaderboard %q", docs[0].file, i+1, r.Spec.Leaderboard, m.Board.Name)
		}
	}
	return m, nil
}

func manifestDecodeError(where string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if f, ok := strings.CutPrefix(msg, "unknown field "); ok {
		f = strings.Trim(f, `"`)
		return apierr.BadRequest(f, "%s: unknown key", where)
	}
	return apierr.BadRequest("", "%s: %s", where, msg)
}
