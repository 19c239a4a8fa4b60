package secrets

// VerbManageOthers is the custom RBAC verb on hostedsecrets that lets its holder act on
// other users' secrets: store one for another owner, and update, delete, revoke or
// purge another user's (docs/secrets.md, "Ownership"). Org owners and the operator
// hold it; the admission policy in config/admission asks for it too.
const VerbManageOthers = "manage-others"
