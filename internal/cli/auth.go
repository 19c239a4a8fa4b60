package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"podium.dev/podium/internal/cli/hub"
)

func (a *app) authCmd() *cobra.Command {
	auth := &cobra.Command{Use: "auth", Short: "Sign in to a cluster running Podium", Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() }}
	auth.AddCommand(a.loginCmd(), a.statusCmd(), a.logoutCmd(), a.apiKeyCmd())
	return auth
}

// whoAmI asks the apiserver who the credentials are (SelfSubjectReview): login checks
// that they work before recording them.
func whoAmI(ctx context.Context, o hub.Options) (user, server string, err error) {
	cfg, _, err := hub.RESTConfig(o)
	if err != nil {
		return "", "", err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", cfg.Host, err
	}
	r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", cfg.Host, hub.KubeError(err, "signing in to "+cfg.Host)
	}
	return r.Status.UserInfo.Username, cfg.Host, nil
}

func (a *app) loginCmd() *cobra.Command {
	var endpoint string
	c := &cobra.Command{
		Use:   "login",
		Short: "Record the cluster, default org and HTTP endpoint to use",
		Long: "Records the kubeconfig, context, default organization and Podium's HTTP endpoint in\n" +
			"$XDG_CONFIG_HOME/podium/config.yaml (mode 0600), after checking that the credentials work.\n" +
			"Credentials stay in the kubeconfig. Without flags, the current kubeconfig context is used.",
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			o := a.flags
			if o.Kubeconfig != "" {
				abs, err := filepath.Abs(o.Kubeconfig)
				if err != nil {
					return err
				}
				o.Kubeconfig = abs
			}
			rules := clientcmd.NewDefaultClientConfigLoadingRules()
			rules.ExplicitPath = o.Kubeconfig
			cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: o.Context})
			raw, err := cc.RawConfig()
			if err != nil {
				return fmt.Errorf("reading the kubeconfig: %w", err)
			}
			if o.Context == "" {
				o.Context = raw.CurrentContext
			}
			if _, ok := raw.Contexts[o.Context]; !ok {
				return usagef("context %q is not in the kubeconfig", o.Context)
			}
			user, server, err := whoAmI(a.ctx(c), o)
			if err != nil {
				return err
			}
			path, err := saveConfig(&loginConfig{Kubeconfig: o.Kubeconfig, Context: o.Context, Org: o.Org, Endpoint: endpoint})
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(map[string]string{"config": path, "server": server, "user": user, "context": o.Context, "org": o.Org, "endpoint": endpoint})
			}
			org := o.Org
			if org == "" {
				org = "none: ids are searched in every namespace you may list"
			}
			fmt.Fprintf(a.stdout, "Logged in to %s as %s (context %s, default org %s)\nRecorded in %s\n", server, user, o.Context, org, path)
			return nil
		},
	}
	c.Flags().StringVar(&endpoint, "endpoint", "", "Podium's HTTP endpoint, e.g. https://podium.example.com")
	a.addJSON(c)
	return c
}

func (a *app) statusCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "status",
		Short: "Show the recorded cluster and whether its credentials work",
		Args:  noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			path, err := configPath()
			if err != nil {
				return err
			}
			cfg, err := loadConfig()
			if err != nil {
				return err
			}
			o, err := a.options()
			if err != nil {
				return err
			}
			_, statErr := os.Stat(path)
			loggedIn := statErr == nil
			user, server, err := whoAmI(a.ctx(c), o)
			if a.json {
				out := map[string]any{"logged_in": loggedIn, "config": path, "kubeconfig": o.Kubeconfig, "context": o.Context,
					"org": o.Org, "endpoint": cfg.Endpoint, "server": server, "user": user}
				if perr := a.printJSON(out); perr != nil {
					return perr
				}
				return err
			}
			if loggedIn {
				fmt.Fprintf(a.stdout, "Config:     %s\n", path)
			} else {
				fmt.Fprintf(a.stdout, "Not logged in (no %s); using the current kubeconfig context\n", path)
			}
			kc := o.Kubeconfig
			if kc == "" {
				kc = "(default)"
			}
			ctxName := o.Context
			if ctxName == "" {
				ctxName = "(current)"
			}
			fmt.Fprintf(a.stdout, "Kubeconfig: %s\nContext:    %s\nOrg:        %s\nEndpoint:   %s\nServer:     %s\n", kc, ctxName, o.Org, cfg.Endpoint, server)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "User:       %s\n", user)
			return nil
		},
	}
	a.addJSON(c)
	return c
}

func (a *app) logoutCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "logout",
		Short: "Forget the recorded cluster (the kubeconfig is left alone)",
		Args:  noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			path, err := configPath()
			if err != nil {
				return err
			}
			if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			fmt.Fprintln(a.stdout, "Logged out: removed", path)
			return nil
		},
	}
}
