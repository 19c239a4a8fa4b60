package admissiongen

import "podium.dev/podium/internal/delivery"

// ownRunSecret is whether name is the object's own run Secret, as admission recorded
// it in the label, on CREATE.
func ownRunSecret(name string) string {
	return "request.operation == 'CREATE' &&\n has(object.metadata.labels) && '" + runLabel + "' in object.metadata.labels &&\n " +
		name + " == object.metadata.labels['" + runLabel + "']"
}

// namesASecret is whether the object's pod spec names a Secret other than its own run
// Secret read as admission wrote it (secretKeyRef with a variable name as key,
// imagePullSecrets); on UPDATE any Secret named counts.
func namesASecret(kinds []Kind) string {
	ref := "e.valueFrom.secretKeyRef"
	return podSpecs(kinds, "request.resource.resource", "object") + ".exists(s,\n" +
		" (has(s.imagePullSecrets) && s.imagePullSecrets.exists(p, has(p.name) && !(\n  " + indent(2, ownRunSecret("p.name")) + "))) ||\n " +
		indent(1, containers("s")) + ".exists(c,\n" +
		"  (has(c.env) && c.env.exists(e, has(e.valueFrom) && has(" + ref + ") && !(\n   has(" + ref + ".name) && " +
		indent(3, ownRunSecret(ref+".name")) + " &&\n   has(" + ref + ".key) && " + ref + ".key.matches('" + envName + "')))) ||\n" +
		"  (has(c.envFrom) && c.envFrom.exists(e, has(e.secretRef)))) ||\n" +
		" (has(s.volumes) && s.volumes.exists(v,\n  " + indent(2, volumeNames("v", nil)) + ")))"
}

// isolationMatch are podium-run-isolation's match conditions.
func isolationMatch(kinds []Kind) map[string]string {
	return map[string]string{
		"NotAController":    notController(delivery.WorkloadControllers),
		"NamesSecretOrUser": namesASecret(kinds) + " ||\n(" + identity(kinds) + ")",
	}
}

// isolationVariables are podium-run-isolation's variables.
func isolationVariables(kinds []Kind) map[string]string {
	run := startsWith(runPrefix)
	return map[string]string{
		"Specs": "(request.operation == 'UPDATE' ? [object, oldObject] : [object]).map(o,\n  " +
			indent(2, podSpec(kinds, "variables.res", "o", "{}")) + ")",
		"Containers": "variables.specs.map(s,\n  " + indent(2, containers("s")) + ")",
		"KeyRefs": "variables.containers.map(cs, cs.map(c, has(c.env) ? c.env.filter(e,\n" +
			"  has(e.valueFrom) && has(e.valueFrom.secretKeyRef) && has(e.valueFrom.secretKeyRef.name) &&\n  " +
			run("e.valueFrom.secretKeyRef.name") + ").map(e, e.valueFrom.secretKeyRef) : []).flatten())",
		"Names": "[0, 1].filter(i, i < size(variables.specs)).map(i,\n  variables.keyRefs[i].map(r, r.name) +\n" +
			"  (has(variables.specs[i].imagePullSecrets) ? variables.specs[i].imagePullSecrets.filter(p,\n" +
			"    has(p.name) && " + run("p.name") + ").map(p, p.name) : []))",
		"Own": "has(object.metadata.labels) && '" + runLabel + "' in object.metadata.labels\n  ? object.metadata.labels['" +
			runLabel + "'] : ''",
		"EnvFromRun": "variables.containers[0].exists(c, has(c.envFrom) && c.envFrom.exists(e,\n" +
			"  has(e.secretRef) && has(e.secretRef.name) && " + run("e.secretRef.name") + "))",
		"VolumeRun": "has(variables.spec.volumes) && variables.spec.volumes.exists(v,\n  " + indent(2, volumeNames("v", run)) + ")",
		"SecretNames": "variables.containers[0].map(c,\n" +
			"  (has(c.env) ? c.env.filter(e, has(e.valueFrom) && has(e.valueFrom.secretKeyRef) && has(e.valueFrom.secretKeyRef.name))\n" +
			"    .map(e, e.valueFrom.secretKeyRef.name) : []) +\n" +
			"  (has(c.envFrom) ? c.envFrom.filter(e, has(e.secretRef) && has(e.secretRef.name)).map(e, e.secretRef.name) : [])).flatten() +\n" +
			"(has(variables.spec.volumes) ? variables.spec.volumes.map(v,\n  " + indent(2, volumeSecretNames("v")) + ").flatten() : []) +\n" +
			"(has(variables.spec.imagePullSecrets) ? variables.spec.imagePullSecrets.filter(p, has(p.name)).map(p, p.name) : [])",
		"Recorded":          namespaceList(grantedSecretsKey),
		"GrantedNamed":      "variables.secretNames.filter(n, " + startsWith(grantPrefix)("n") + " || n in variables.recorded)",
		"What":              what(kinds),
		"RunsAsAnotherUser": identity(kinds),
		"SA":                serviceAccount("variables.spec"),
	}
}

// namespaceList is the comma-separated list the operator records on the namespace in
// annotation key.
func namespaceList(key string) string {
	a := "namespaceObject.metadata.annotations"
	return "has(" + a + ") && '" + key + "' in " + a + " &&\n" + a + "['" + key + "'] != ''\n  ? " + a + "['" + key + "'].split(',') : []"
}

// what names the object in a message: its kind, namespace and name.
func what(kinds []Kind) string {
	s := "("
	for _, k := range kinds {
		s += "variables.res == '" + k.Resource + "' ? '" + k.Kind + "' :\n "
	}
	return s + "variables.res) +\n' ' + request.namespace + '/' +\n" +
		"(has(object.metadata.name) && object.metadata.name != '' ? object.metadata.name :\n" +
		" has(object.metadata.generateName) ? object.metadata.generateName + '*' : '')"
}
