package testenv

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// updateBackoff retries a conflicting update for about 15 s: on a busy machine the
// operator may write the same object several times in a row.
var updateBackoff = wait.Backoff{Steps: 30, Duration: 20 * time.Millisecond, Factor: 1.3, Jitter: 0.1, Cap: time.Second}

// Update reads obj's latest state, applies change and writes it, reading again and
// retrying on a conflict. A test that reads an object the operator also writes (its
// status, its recorded id, a value Secret's binding) and then updates it races the
// operator; this is the update such a test makes. change must be the whole change:
// it runs on each fresh read.
func Update[T client.Object](ctx context.Context, c client.Client, obj T, change func(T)) error {
	return retry.RetryOnConflict(updateBackoff, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		change(obj)
		return c.Update(ctx, obj)
	})
}
