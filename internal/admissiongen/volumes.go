package admissiongen

import "strings"

// secretVolume is a volume source that names a Secret: v.<source>[.<ref>].<name>.
type secretVolume struct{ source, ref, name string }

// secretVolumes are the volume sources, other than projected, through which a Pod reads
// a Secret.
var secretVolumes = []secretVolume{
	{"secret", "", "secretName"},
	{"csi", "nodePublishSecretRef", "name"},
	{"azureFile", "", "secretName"},
	{"cephfs", "secretRef", "name"},
	{"rbd", "secretRef", "name"},
	{"iscsi", "secretRef", "name"},
	{"flexVolume", "secretRef", "name"},
	{"scaleIO", "secretRef", "name"},
	{"storageos", "secretRef", "name"},
}

// holder is the object of v that holds the Secret's name, and the name's path.
func (sv secretVolume) holder(v string) (string, string) {
	h := v + "." + sv.source
	if sv.ref != "" {
		h += "." + sv.ref
	}
	return h, h + "." + sv.name
}

// present is the has() tests that v uses this source with a Secret reference.
func (sv secretVolume) present(v string) string {
	p := "has(" + v + "." + sv.source + ")"
	if sv.ref != "" {
		p += " && has(" + v + "." + sv.source + "." + sv.ref + ")"
	}
	return p
}

// volumeNames is whether volume v names a Secret (whose name satisfies pred, when
// pred is not nil).
func volumeNames(v string, pred func(name string) string) string {
	named := func(present, name string) string {
		if pred == nil {
			return present
		}
		return present + " && has(" + name + ") && " + pred(name)
	}
	parts := make([]string, 0, len(secretVolumes)+1)
	for i, sv := range secretVolumes {
		_, name := sv.holder(v)
		parts = append(parts, "("+named(sv.present(v), name)+")")
		if i == 0 {
			parts = append(parts, "(has("+v+".projected) && has("+v+".projected.sources) && "+v+
				".projected.sources.exists(p,\n  "+named("has(p.secret)", "p.secret.name")+"))")
		}
	}
	return strings.Join(parts, " ||\n")
}

// volumeSecretNames are the names of the Secrets volume v names.
func volumeSecretNames(v string) string {
	parts := make([]string, 0, len(secretVolumes)+1)
	for i, sv := range secretVolumes {
		_, name := sv.holder(v)
		parts = append(parts, "("+sv.present(v)+" && has("+name+") ? ["+name+"] : [])")
		if i == 0 {
			parts = append(parts, "(has("+v+".projected) && has("+v+".projected.sources) ? "+v+
				".projected.sources.filter(p, has(p.secret) && has(p.secret.name)).map(p, p.secret.name) : [])")
		}
	}
	return strings.Join(parts, " +\n")
}

// startsWith is a pred: the name starts with prefix.
func startsWith(prefix string) func(string) string {
	return func(name string) string { return name + ".startsWith('" + prefix + "')" }
}
