package testenv

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"k8s.io/client-go/rest"

	"podium.dev/podium/internal/operator"
)

// Operator is the whole operator (operator.NewManager, as cmd/operator builds it)
// running in the test process with its HTTP API on a free 127.0.0.1 port.
type Operator struct {
	// BaseURL is the HTTP API's address, "http://127.0.0.1:<port>".
	BaseURL string
	// Done is closed when the manager has stopped; Err then says how.
	Done <-chan struct{}
	err  error
}

// Err is the manager's result; read it after Done is closed.
func (o *Operator) Err() error { return o.err }

// StartOperator runs the operator against cfg until ctx ends and waits (at most two
// minutes) until its /readyz answers 200.
func StartOperator(ctx context.Context, cfg *rest.Config) (*Operator, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	mgr, err := operator.NewManager(cfg, operator.Options{MetricsAddr: "0", ProbeAddr: "0", HTTPListener: ln})
	if err != nil {
		ln.Close()
		return nil, err
	}
	done := make(chan struct{})
	op := &Operator{BaseURL: "http://" + ln.Addr().String(), Done: done}
	go func() {
		defer close(done)
		op.err = mgr.Start(ctx)
	}()
	deadline := time.After(2 * time.Minute)
	for {
		if resp, err := http.Get(op.BaseURL + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return op, nil
			}
		}
		select {
		case <-done:
			return nil, fmt.Errorf("the operator stopped before it was ready: %w", op.err)
		case <-deadline:
			return nil, fmt.Errorf("the operator was not ready within two minutes")
		case <-time.After(50 * time.Millisecond):
		}
	}
}
