package admissiongen

import (
	"strings"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/delivery"
)

// grantedSecretsKey and userServiceAccountsKey are the namespace records the policies read.
var (
	grantedSecretsKey      = hubv1alpha1.AnnotationGrantedSecrets
	userServiceAccountsKey = hubv1alpha1.AnnotationUserServiceAccounts
)

// integrity are podium-run-integrity's expressions.
func integrity(kinds []Kind) map[string]string {
	recorded := func(o string) string {
		md := o + ".metadata"
		return "(has(" + md + ".annotations) ? " + quoted(recordedKeys) + "\n  .filter(k, k in " + md +
			".annotations).map(k, k + '=' + " + md + ".annotations[k]) : []) +\n(has(" + md + ".labels) && '" + runLabel +
			"' in " + md + ".labels\n  ? ['" + runLabel + "=' + " + md + ".labels['" + runLabel + "']] : [])"
	}
	guarded := func(o string) string {
		return byResource(kinds, "variables.res", func(k Kind) string { return valueOr(o, k.Runs, k.Required, "null") })
	}
	return map[string]string{
		"Match": "(" + templateMetas(kinds, "request.resource.resource", "oldObject") + " + [oldObject.metadata] +\n" +
			" (request.resource.resource in " + quoted(runs(kinds)) + " ? [object.metadata] : [])\n).exists(m,\n  " +
			indent(2, marked("m", recordedKeys)) + ")",
		"OldGuarded": guarded("oldObject"),
		"NewGuarded": guarded("object"),
		"OldMetas":   templateMetas(kinds, "variables.res", "oldObject") + " + [oldObject.metadata]",
		"Delivered":  "variables.oldMetas.exists(m,\n  " + indent(2, marked("m", recordedKeys)) + ")",
		"Requesters": "variables.oldMetas.filter(m, has(m.annotations) && '" + requesterKey + "' in m.annotations)\n" +
			"  .map(m, m.annotations['" + requesterKey + "'])",
		"Exempt":      "authorizer.group('" + group + "').resource('runs').namespace(request.namespace)\n.check('change-others').allowed()",
		"OldRecorded": recorded("oldObject"),
		"NewRecorded": recorded("object"),
		"What": "has(request.subResource) && request.subResource == 'ephemeralcontainers' ? 'add ephemeral containers to it' :\n" +
			byResource(kinds, "variables.res", func(k Kind) string { return "'change its " + k.Runs + "'" }),
		"RecordsOnRuns":   "!(variables.res in " + quoted(runs(kinds)) + ")",
		"RecordedMessage": "': metadata " + strings.Join(recordedKeys, ", ") + "' +\n' and the label " + runLabel + " are recorded by admission; only the requester may change them' +",
	}
}

// revisions are podium-controller-revisions' expressions.
func revisions() map[string]string {
	return map[string]string{
		"NotAController": notController(delivery.RevisionControllers),
		"Allowed":        "authorizer.group('" + group + "').resource('runs').namespace(request.namespace).check('write-revisions').allowed()",
	}
}

// elsewhere are podium-run-identity-elsewhere's expressions.
func elsewhere(kinds []Kind) map[string]string {
	return map[string]string{
		"NotAController":  notController(delivery.WorkloadControllers),
		"ChangesWhatRuns": "!(" + unchanged(kinds, "request.resource.resource") + ")",
		"Specs":           "[" + podSpec(kinds, "request.resource.resource", "object", "null") + "].filter(s, s != null)",
		"SA":              "size(variables.specs) == 0 ? '' :\n" + serviceAccount("variables.specs[0]"),
		"Recorded":        namespaceList(userServiceAccountsKey),
		"Label":           hubv1alpha1.LabelUserServiceAccounts,
	}
}

// webhook are the delivery webhook's match conditions: the object (or, on update, the
// old object) asks for delivery or carries what admission records, on itself or its
// templates, or its pod spec names a run Secret.
func webhook(kinds []Kind) map[string]string {
	run := startsWith(runPrefix)
	ref := "e.valueFrom.secretKeyRef"
	return map[string]string{
		"NotTheJobController": "request.userInfo.username != '" + delivery.JobControllerUser + "'",
		"AboutDelivery": "[object, oldObject].exists(o, o != null && (\n(" +
			templateMetas(kinds, "request.resource.resource", "o") + " + [o.metadata]\n).exists(m,\n " +
			indent(1, marked("m", append(append([]string{}, askKeys...), recordedKeys...))) + ") ||\n" +
			podSpecs(kinds, "request.resource.resource", "o") + ".exists(s,\n" +
			" (has(s.imagePullSecrets) && s.imagePullSecrets.exists(p, has(p.name) && " + run("p.name") + ")) ||\n " +
			indent(1, containers("s")) + ".exists(c,\n" +
			"  (has(c.env) && c.env.exists(e, has(e.valueFrom) && has(" + ref + ") &&\n   has(" + ref + ".name) && " + run(ref+".name") + ")) ||\n" +
			"  (has(c.envFrom) && c.envFrom.exists(e, has(e.secretRef) && has(e.secretRef.name) &&\n   " + run("e.secretRef.name") + "))))))",
	}
}
