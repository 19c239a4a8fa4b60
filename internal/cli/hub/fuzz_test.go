package hub

import "testing"

// FuzzParseFiles checks that no input makes the file reader panic, and that what it
// accepts decodes into every file shape without panicking either.
func FuzzParseFiles(f *testing.F) {
	for _, seed := range []string{
		"rows:\n  - metadata: {agent: a}\n    metrics: {reward: 1}\n",
		`{"rows": [{"trial_ids": ["x"], "status": "hide"}]}`,
		"name: x\ntitle: X\ncolumns:\n  - id: a\n    enable_sorting: yes\n",
		"a: &x [1, 2]\nb: *x\n",
		"---\n---\nkind: Leaderboard\napiVersion: hub.podium.dev/v1alpha1\n",
		"x: .inf\n",
		"[1, {a: b}]",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		docs, err := parseDocuments("f.yaml", []byte(in))
		if err != nil {
			return
		}
		for _, d := range docs {
			_ = d.decodeStrict(&BoardFile{})
			_ = d.decodeStrict(&RowsFile{})
			_ = d.decodeStrict(&RowFile{})
			_ = isManifest(d)
		}
		_, _ = parseManifest(docs)
	})
}
