package keylookup

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/go-logr/logr"

	"podium.dev/podium/internal/apierr"
	"podium.dev/podium/internal/authn"
)

// Handler is the operator's side: POST Path with the read tier's ServiceAccount token as
// bearer (the HTTP server's middleware authenticated it by TokenReview) and a key or
// access token in the body. Only ReadTier may ask: to anyone else the endpoint is a
// 403, so it is no oracle for guessing keys.
type Handler struct {
	// Keys authenticates API keys and access tokens (the operator's apikeys.Reviewer).
	Keys authn.Reviewer
	// ReadTier is the user name of the read tier's ServiceAccount,
	// system:serviceaccount:<namespace>:podium-read.
	ReadTier string
	Log      logr.Logger
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c := authn.CallerFrom(r.Context())
	if c.Anonymous || c.User == "" {
		apierr.Write(w, apierr.Unauthenticated())
		return
	}
	if h.ReadTier == "" || c.User != h.ReadTier || c.APIKeyID != "" {
		apierr.Write(w, apierr.Forbidden("only the read tier's ServiceAccount may look API keys up"))
		return
	}
	var req request
	if err := apierr.DecodeJSON(r, &req); err != nil {
		apierr.Write(w, err)
		return
	}
	if !IsKey(req.Token) {
		apierr.Write(w, apierr.New(http.StatusBadRequest, apierr.CodeBadRequest, "token is not a Podium API key or access token"))
		return
	}
	who, err := h.Keys.Authenticate(r.Context(), req.Token)
	switch {
	case errors.Is(err, authn.ErrInvalidToken):
		apierr.Write(w, apierr.Unauthenticated())
		return
	case err != nil:
		h.Log.Error(err, "Looking an API key up for the read tier failed")
		apierr.Write(w, apierr.New(http.StatusServiceUnavailable, apierr.CodeUnavailable, "the key could not be checked now; try again"))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(identityOf(who))
}
