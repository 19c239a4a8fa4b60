// Package httpapi is Podium's HTTP server: one net/http server per operator replica that
// serves the public leaderboard read and the routes other capabilities mount (secrets,
// preflight, web pages), with the parts every endpoint shares done once here: timeouts,
// a body limit, bearer-token authentication, the error envelope for unknown routes and
// panics, one log line and metrics per request, health and readiness.
package httpapi
