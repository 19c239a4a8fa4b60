// Package rowwrite writes LeaderboardRows and asks the apiserver for only their metadata
// back (a PartialObjectMetadata), for writers that use nothing of the answer but its
// metadata: the operator's status write and the CLI's row create. Neither the apiserver
// encodes the whole row again nor the writer decodes it (docs/performance.md, "Rows in").
package rowwrite

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/scheme"
)

// MetadataOnly is the Accept header that asks for a PartialObjectMetadata answer.
const MetadataOnly = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"

// Client writes rows through the apiserver cfg names.
type Client struct{ rc rest.Interface }

// New connects a Client over hc (the caller's HTTP client, its transport shared).
func New(cfg *rest.Config, hc *http.Client) (*Client, error) {
	rc, err := apiutil.RESTClientForGVK(hubv1alpha1.GroupVersion.WithKind("LeaderboardRow"), false, false, cfg, serializer.NewCodecFactory(scheme.Scheme), hc)
	if err != nil {
		return nil, err
	}
	return &Client{rc: rc}, nil
}

// Create creates row and sets its metadata to the apiserver's answer (name, uid,
// resourceVersion, annotations admission recorded); its values stay what was sent.
func (c *Client) Create(ctx context.Context, row *hubv1alpha1.LeaderboardRow) error {
	raw, err := c.send(ctx, c.rc.Post().Namespace(row.Namespace).Resource("leaderboardrows"), row)
	if err != nil {
		return err
	}
	var meta metav1.PartialObjectMetadata
	if err := json.Unmarshal(raw, &meta); err != nil {
		return fmt.Errorf("reading the created row: %w", err)
	}
	if meta.UID == "" {
		return fmt.Errorf("reading the created row: the apiserver's answer has no uid")
	}
	row.ObjectMeta = meta.ObjectMeta
	return nil
}

// UpdateStatus writes row's status as an update at its resourceVersion (like
// client.Status().Update); only the error of the answer is used.
func (c *Client) UpdateStatus(ctx context.Context, row *hubv1alpha1.LeaderboardRow) error {
	_, err := c.send(ctx, c.rc.Put().Namespace(row.Namespace).Resource("leaderboardrows").Name(row.Name).SubResource("status"), row)
	return err
}

// send sends row as the body of req and returns the answer's bytes.
func (c *Client) send(ctx context.Context, req *rest.Request, row *hubv1alpha1.LeaderboardRow) ([]byte, error) {
	sent := *row // objects from a cache carry no kind, which a request body needs
	sent.TypeMeta = metav1.TypeMeta{APIVersion: hubv1alpha1.GroupVersion.String(), Kind: "LeaderboardRow"}
	body, err := json.Marshal(&sent)
	if err != nil {
		return nil, err
	}
	return req.SetHeader("Accept", MetadataOnly).SetHeader("Content-Type", "application/json").Body(body).Do(ctx).Raw()
}
