package hub

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"

	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"

	"podium.dev/podium/internal/apierr"
)

// Marshal renders v as indented JSON or as block-style YAML keeping the field order of
// the JSON (so files read top to bottom in the order docs/cli.md lists the fields).
func Marshal(v any, f Format) ([]byte, error) {
	j, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	if f == FormatJSON {
		return append(j, '\n'), nil
	}
	return jsonToYAML(j)
}

func jsonToYAML(j []byte) ([]byte, error) {
	var n yamlv3.Node
	if err := yamlv3.Unmarshal(j, &n); err != nil {
		return nil, err
	}
	blockStyle(&n)
	var b bytes.Buffer
	enc := yamlv3.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&n); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// blockStyle drops the flow and quoting styles JSON parsing leaves on the nodes; the
// encoder still quotes strings that would otherwise read as another type.
//
// Strings that a YAML 1.1 reader would take for something else ("yes", "n", "on",
// "1_000", "12:30") are double-quoted: kubectl, Argo CD and Flux read manifests with
// YAML 1.1 rules.
func blockStyle(n *yamlv3.Node) {
	n.Style = 0
	if n.Kind == yamlv3.ScalarNode && n.ShortTag() == "!!str" && !plainIsString11(n.Value) {
		n.Style = yamlv3.DoubleQuotedStyle
	}
	for _, c := range n.Content {
		blockStyle(c)
	}
}

// plainIsString11 says whether s, written plain, reads back as the string s under
// YAML 1.1 (sigs.k8s.io/yaml, which kubectl uses).
func plainIsString11(s string) bool {
	var v any
	if err := yaml.Unmarshal([]byte("v: "+s), &v); err != nil {
		return false
	}
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	got, ok := m["v"].(string)
	return ok && got == s
}

// WriteFile writes data to path, refusing an existing file unless force (docs/cli.md
// rule 9). The data goes to a temporary file first so a failure leaves no half file.
func WriteFile(path string, data []byte, force bool) error {
	if _, err := os.Stat(path); err == nil && !force {
		return apierr.New(http.StatusBadRequest, apierr.CodeBadRequest, "%s already exists; pass --force to overwrite it", path)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return apierr.BadRequest("output", "%s: %v", path, unwrapPathError(err))
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".podium-*")
	if err != nil {
		return apierr.BadRequest("output", "writing %s: %v", path, unwrapPathError(err))
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return apierr.BadRequest("output", "writing %s: %v", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return apierr.BadRequest("output", "writing %s: %v", path, err)
	}
	if err := tmp.Close(); err != nil {
		return apierr.BadRequest("output", "writing %s: %v", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return apierr.BadRequest("output", "writing %s: %v", path, unwrapPathError(err))
	}
	return nil
}

// OutputFormat checks an export's --output and --format: the extension must be .yaml,
// .yml or .json; format "" follows the extension; "manifest" is YAML documents (or a
// JSON v1 List for .json).
func OutputFormat(path, format string) (Format, Format, error) {
	ext, err := FormatOf(path)
	if err != nil {
		return "", "", err
	}
	switch Format(format) {
	case "":
		return ext, ext, nil
	case FormatYAML, FormatJSON:
		if Format(format) != ext {
			return "", "", apierr.BadRequest("format", "--format %s does not match the extension of %s", format, path)
		}
		return ext, ext, nil
	case FormatManifest:
		return FormatManifest, ext, nil
	}
	return "", "", apierr.BadRequest("format", "must be yaml, json or manifest, not %q", format)
}
