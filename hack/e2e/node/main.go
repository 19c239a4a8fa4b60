// Command podium-e2e-node runs a single-node Kubernetes cluster on this machine for the
// e2e tests (docs/development.md, "The e2e node"): etcd, kube-apiserver,
// kube-controller-manager and kube-scheduler (the pinned builds of hack/controlplane.sh),
// containerd and runc (Debian's), kubelet and kube-proxy (hack/controlplane.sh node), a
// CNI bridge network (Debian's containernetworking-plugins). Every file it writes is under
// its directory; what the kernel holds (a bridge, iptables rules, cgroups, mounts) is
// removed when it stops.
//
//	podium-e2e-node run  -dir D -assets CP -node-assets NODE -image TAR...
//	    starts everything, imports the image archives into containerd, waits until the
//	    node is Ready, writes D/kubeconfig and D/ready, and runs until SIGINT or SIGTERM;
//	    then it stops everything and removes what it left in the kernel.
//	podium-e2e-node clean -dir D
//	    removes what a run that was killed left behind (run does this first, too).
//
// It must run as root (containerd, kubelet and kube-proxy need it).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// The node's network. The bridge is made before anything starts so that the apiserver and
// the kubelet can bind its address: nothing of the cluster listens on an address other
// machines can reach.
const (
	Bridge      = "podium-e2e0"
	NodeIP      = "10.244.0.1"
	PodCIDR     = "10.244.0.0/24"
	ServiceCIDR = "10.96.0.0/16"
	// APIServerIP is the first address of ServiceCIDR (the kubernetes Service).
	APIServerIP = "10.96.0.1"
	APIPort     = 6443
	NodeName    = "podium-e2e"
	// ContainerdNS is the containerd namespace the CRI plugin uses.
	ContainerdNS = "k8s.io"
	// PauseImage is containerd's sandbox_image, built by make e2e from hack/e2e/pause.
	PauseImage = "registry.k8s.io/pause:podium-e2e"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: podium-e2e-node run|clean -dir DIR ...")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	dir := fs.String("dir", ".podium-e2e", "state directory (every file of the node)")
	assets := fs.String("assets", "", "directory of etcd, kube-apiserver, kube-controller-manager, kubectl (hack/controlplane.sh)")
	nodeAssets := fs.String("node-assets", "", "directory of kubelet, kube-scheduler, kube-proxy, crictl (hack/controlplane.sh node)")
	var images multiFlag
	fs.Var(&images, "image", "OCI archive to import into containerd (repeatable)")
	_ = fs.Parse(os.Args[2:])
	abs, err := filepath.Abs(*dir)
	if err != nil {
		fatal(err)
	}
	n := &Node{Dir: abs, Assets: *assets, NodeAssets: *nodeAssets, Images: images}
	switch os.Args[1] {
	case "run":
		if os.Geteuid() != 0 {
			fatal(errors.New("the e2e node must run as root (containerd, kubelet, kube-proxy)"))
		}
		if err := n.Run(); err != nil {
			fatal(err)
		}
	case "clean":
		n.Clean()
	default:
		fatal(fmt.Errorf("unknown command %q", os.Args[1]))
	}
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "podium-e2e-node:", err)
	os.Exit(1)
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "e2e-node %s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

// Node is the cluster's state directory and binaries.
type Node struct {
	Dir, Assets, NodeAssets string
	Images                  []string
	procs                   []*proc
}

func (n *Node) path(elem ...string) string { return filepath.Join(append([]string{n.Dir}, elem...)...) }

// Socket is containerd's socket.
func (n *Node) Socket() string { return n.path("containerd", "containerd.sock") }

// Run starts the cluster, waits for a signal and stops it.
func (n *Node) Run() error {
	for _, b := range []string{"containerd", "runc", "ctr", "iptables", "ip"} {
		if _, err := exec.LookPath(b); err != nil {
			return fmt.Errorf("%s is missing (hack/e2e/run.sh installs Debian's containerd, runc, containernetworking-plugins, iptables): %w", b, err)
		}
	}
	if _, err := os.Stat("/usr/lib/cni/bridge"); err != nil {
		return fmt.Errorf("the CNI plugins are missing (Debian's containernetworking-plugins): %w", err)
	}
	n.Clean()
	// A fresh directory, but for the log and pid of whoever started the runner.
	entries, err := os.ReadDir(n.Dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	for _, e := range entries {
		if e.Name() != "runner.log" && e.Name() != "runner.pid" {
			if err := os.RemoveAll(n.path(e.Name())); err != nil {
				return err
			}
		}
	}
	if err := os.MkdirAll(n.path("logs"), 0o755); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	err = n.start(ctx)
	if err == nil {
		logf("ready: KUBECONFIG=%s (logs in %s)", n.path("kubeconfig"), n.path("logs"))
		<-ctx.Done()
		logf("stopping")
	} else {
		logf("start failed: %v", err)
	}
	n.stopAll()
	n.Clean()
	return err
}

//nolint:funlen // the node's start-up in order (PKI, etcd, apiserver, controllers, containerd, kubelet, proxy), each step a call; what is left is their wiring
func (n *Node) start(ctx context.Context) error {
	pki, err := makePKI(n.path("pki"))
	if err != nil {
		return err
	}
	if err := n.hostNetwork(); err != nil {
		return err
	}
	etcdPort, etcdPeer := freePort(), freePort()
	if _, err := n.startProc("etcd", filepath.Join(n.Assets, "etcd"),
		"--name=e2e", "--data-dir="+n.path("etcd"),
		"--listen-client-urls=http://127.0.0.1:"+strconv.Itoa(etcdPort),
		"--advertise-client-urls=http://127.0.0.1:"+strconv.Itoa(etcdPort),
		"--listen-peer-urls=http://127.0.0.1:"+strconv.Itoa(etcdPeer),
		"--initial-advertise-peer-urls=http://127.0.0.1:"+strconv.Itoa(etcdPeer),
		"--initial-cluster=e2e=http://127.0.0.1:"+strconv.Itoa(etcdPeer),
		"--unsafe-no-fsync"); err != nil {
		return err
	}
	if _, err := n.startProc("kube-apiserver", filepath.Join(n.Assets, "kube-apiserver"),
		"--etcd-servers=http://127.0.0.1:"+strconv.Itoa(etcdPort),
		"--bind-address="+NodeIP, "--advertise-address="+NodeIP, "--secure-port="+strconv.Itoa(APIPort),
		"--tls-cert-file="+pki.file("apiserver.crt"), "--tls-private-key-file="+pki.file("apiserver.key"),
		"--client-ca-file="+pki.file("ca.crt"),
		"--service-account-key-file="+pki.file("sa.pub"),
		"--service-account-signing-key-file="+pki.file("sa.key"),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-cluster-ip-range="+ServiceCIDR,
		"--authorization-mode=Node,RBAC",
		"--enable-admission-plugins=NodeRestriction",
		"--allow-privileged=true",
		"--kubelet-client-certificate="+pki.file("apiserver-kubelet-client.crt"),
		"--kubelet-client-key="+pki.file("apiserver-kubelet-client.key"),
		"--kubelet-certificate-authority="+pki.file("ca.crt"),
		"--kubelet-preferred-address-types=InternalIP",
		"--profiling=false"); err != nil {
		return err
	}
	admin := n.path("kubeconfig")
	cs, err := clientFor(admin)
	if err != nil {
		return err
	}
	if err := waitFor(ctx, "kube-apiserver ready", 2*time.Minute, func() (bool, error) {
		body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil && string(body) == "ok", nil
	}); err != nil {
		return err
	}
	if _, err := n.startProc("kube-controller-manager", filepath.Join(n.Assets, "kube-controller-manager"),
		"--kubeconfig="+pki.file("kube-controller-manager.kubeconfig"),
		"--authentication-kubeconfig="+pki.file("kube-controller-manager.kubeconfig"),
		"--authorization-kubeconfig="+pki.file("kube-controller-manager.kubeconfig"),
		"--controllers=*",
		"--use-service-account-credentials=true",
		"--service-account-private-key-file="+pki.file("sa.key"),
		"--root-ca-file="+pki.file("ca.crt"),
		"--cluster-signing-cert-file="+pki.file("ca.crt"), "--cluster-signing-key-file="+pki.file("ca.key"),
		"--service-cluster-ip-range="+ServiceCIDR,
		"--leader-elect=false",
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(freePort()),
		"--cert-dir="+n.path("kube-controller-manager")); err != nil {
		return err
	}
	if _, err := n.startProc("kube-scheduler", filepath.Join(n.NodeAssets, "kube-scheduler"),
		"--kubeconfig="+pki.file("kube-scheduler.kubeconfig"),
		"--authentication-kubeconfig="+pki.file("kube-scheduler.kubeconfig"),
		"--authorization-kubeconfig="+pki.file("kube-scheduler.kubeconfig"),
		"--leader-elect=false",
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(freePort()),
		"--cert-dir="+n.path("kube-scheduler")); err != nil {
		return err
	}
	if err := n.startContainerd(ctx); err != nil {
		return err
	}
	if err := n.importImages(); err != nil {
		return err
	}
	if err := n.startKubelet(pki); err != nil {
		return err
	}
	if err := n.startKubeProxy(pki); err != nil {
		return err
	}
	if err := waitFor(ctx, "node "+NodeName+" Ready", 3*time.Minute, func() (bool, error) {
		node, err := cs.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status == corev1.ConditionTrue, nil
			}
		}
		return false, nil
	}); err != nil {
		return err
	}
	// The default ServiceAccount of a namespace is made by kube-controller-manager; wait
	// for default's so that the first Pod of a test does not race it.
	if err := waitFor(ctx, "ServiceAccount default/default", time.Minute, func() (bool, error) {
		_, err := cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	}); err != nil {
		return err
	}
	return os.WriteFile(n.path("ready"), []byte(admin+"\n"), 0o644)
}

// hostNetwork makes the node's bridge with its address, and turns IP forwarding on (the
// Service rules route between the host and the Pods).
func (n *Node) hostNetwork() error {
	old, err := os.ReadFile("/proc/sys/net/ipv4/ip_forward")
	if err != nil {
		return err
	}
	if err := os.WriteFile(n.path("ip_forward.old"), old, 0o644); err != nil {
		return err
	}
	for _, args := range [][]string{
		{"link", "add", Bridge, "type", "bridge"},
		{"addr", "add", NodeIP + "/24", "dev", Bridge},
		{"link", "set", Bridge, "up"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, out)
		}
	}
	if err := os.WriteFile("/proc/sys/net/ipv4/ip_forward", []byte("1\n"), 0o644); err != nil {
		return err
	}
	// Packets between Pods on the bridge must pass iptables for Services to work.
	if err := os.WriteFile("/proc/sys/net/bridge/bridge-nf-call-iptables", []byte("1\n"), 0o644); err != nil {
		return fmt.Errorf("br_netfilter: %w", err)
	}
	return nil
}

//nolint:funlen // containerd's configuration written out in one piece, then started and awaited
func (n *Node) startContainerd(ctx context.Context) error {
	cd := n.path("containerd")
	for _, d := range []string{"root", "state", "opt", "runc", "cni/net.d", "cni/ipam"} {
		if err := os.MkdirAll(filepath.Join(cd, d), 0o700); err != nil {
			return err
		}
	}
	conf := fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
disabled_plugins = ["io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.aufs", "io.containerd.tracing.processor.v1.otlp"]

[grpc]
  address = %[3]q

[plugins."io.containerd.internal.v1.opt"]
  path = %[4]q

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[5]q
  netns_mounts_under_state_dir = true
  # No process here may lower its oom_score_adj (the machine withholds CAP_SYS_RESOURCE);
  # the kubelet asks -998 for every sandbox. Clamp to containerd's own score instead.
  restrict_oom_score_adj = true
  enable_unprivileged_ports = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        Root = %[6]q
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = %[7]q
`, filepath.Join(cd, "root"), filepath.Join(cd, "state"), n.Socket(), filepath.Join(cd, "opt"),
		PauseImage, filepath.Join(cd, "runc"), filepath.Join(cd, "cni/net.d"))
	if err := os.WriteFile(filepath.Join(cd, "config.toml"), []byte(conf), 0o644); err != nil {
		return err
	}
	cni := fmt.Sprintf(`{
  "cniVersion": "0.4.0",
  "name": "podium-e2e",
  "plugins": [
    {
      "type": "bridge",
      "bridge": %q,
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": %q, "gateway": %q}]],
        "routes": [{"dst": "0.0.0.0/0"}],
        "dataDir": %q
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
`, Bridge, PodCIDR, NodeIP, filepath.Join(cd, "cni/ipam"))
	if err := os.WriteFile(filepath.Join(cd, "cni/net.d/10-podium-e2e.conflist"), []byte(cni), 0o644); err != nil {
		return err
	}
	if _, err := n.startProc("containerd", "containerd", "--config", filepath.Join(cd, "config.toml")); err != nil {
		return err
	}
	return waitFor(ctx, "containerd", time.Minute, func() (bool, error) {
		return exec.Command("ctr", "-a", n.Socket(), "version").Run() == nil, nil
	})
}

// importImages imports the image archives into containerd's CRI namespace. An image
// whose name is not fully qualified ("podium:dev") is also tagged with the name a Pod's
// image resolves to ("docker.io/library/podium:dev"), as a registry pull would store it.
func (n *Node) importImages() error {
	ctr := func(args ...string) (string, error) {
		out, err := exec.Command("ctr", append([]string{"-a", n.Socket(), "-n", ContainerdNS}, args...)...).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("ctr %s: %w: %s", strings.Join(args, " "), err, out)
		}
		return string(out), nil
	}
	for _, tar := range n.Images {
		if _, err := ctr("images", "import", tar); err != nil {
			return err
		}
	}
	out, err := ctr("images", "ls", "-q")
	if err != nil {
		return err
	}
	for _, name := range strings.Fields(out) {
		if strings.HasPrefix(name, "sha256:") {
			continue
		}
		if full := normalize(name); full != name {
			if _, err := ctr("images", "tag", "--force", name, full); err != nil {
				return err
			}
			logf("image %s", full)
		} else {
			logf("image %s", name)
		}
	}
	return nil
}

// normalize is the Docker reference normalization: a name without a registry is Docker
// Hub's, a name without a path is in library/.
func normalize(name string) string {
	if i := strings.IndexByte(name, '/'); i < 0 {
		return "docker.io/library/" + name
	} else if first := name[:i]; !strings.ContainsAny(first, ".:") && first != "localhost" {
		return "docker.io/" + name
	}
	return name
}

func (n *Node) startKubelet(pki *PKI) error {
	root := n.path("kubelet")
	if err := os.MkdirAll(root, 0o700); err != nil {
		return err
	}
	conf := fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# This machine has cgroup v1 (with a cgroup2 hierarchy mounted beside it).
failCgroupV1: false
cgroupDriver: cgroupfs
failSwapOn: false
address: %[1]s
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 0
tlsCertFile: %[2]s
tlsPrivateKeyFile: %[3]s
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: %[4]s}
authorization:
  mode: Webhook
containerRuntimeEndpoint: unix://%[5]s
imageServiceEndpoint: unix://%[5]s
podLogsDir: %[6]s
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
# The machine's disk is shared and mostly full of other work: no eviction or image GC
# decisions from its fill level.
evictionHard: {memory.available: "100Mi", nodefs.available: "1%%", imagefs.available: "1%%", nodefs.inodesFree: "1%%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
registerNode: true
maxPods: 30
`, NodeIP, pki.file("kubelet.crt"), pki.file("kubelet.key"), pki.file("ca.crt"), n.Socket(), n.path("pod-logs"))
	if err := os.WriteFile(n.path("kubelet-config.yaml"), []byte(conf), 0o644); err != nil {
		return err
	}
	_, err := n.startProc("kubelet", filepath.Join(n.NodeAssets, "kubelet"),
		"--config="+n.path("kubelet-config.yaml"),
		"--kubeconfig="+pki.file("kubelet.kubeconfig"),
		"--root-dir="+root,
		"--cert-dir="+filepath.Join(root, "pki"),
		"--hostname-override="+NodeName,
		"--node-ip="+NodeIP,
		"--v=2")
	return err
}

func (n *Node) startKubeProxy(pki *PKI) error {
	conf := fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clusterCIDR: %[1]s
hostnameOverride: %[2]s
bindAddress: 127.0.0.1
healthzBindAddress: 127.0.0.1:%[3]d
metricsBindAddress: 127.0.0.1:%[4]d
clientConnection:
  kubeconfig: %[5]s
# Leave the machine's conntrack table size and timeouts as they are.
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
iptables:
  syncPeriod: 10s
  minSyncPeriod: 0s
`, PodCIDR, NodeName, freePort(), freePort(), pki.file("kube-proxy.kubeconfig"))
	if err := os.WriteFile(n.path("kube-proxy-config.yaml"), []byte(conf), 0o644); err != nil {
		return err
	}
	_, err := n.startProc("kube-proxy", filepath.Join(n.NodeAssets, "kube-proxy"), "--config="+n.path("kube-proxy-config.yaml"))
	return err
}

// proc is a started component.
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
}

func (n *Node) startProc(name, bin string, args ...string) (*proc, error) {
	logFile, err := os.OpenFile(n.path("logs", name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Dir = n.Dir
	// Never outlive the runner, even when it is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		logFile.Close()
		select {
		case <-stopping:
		default:
			logf("%s exited: %v (log: %s)", name, err, n.path("logs", name+".log"))
		}
		close(p.done)
	}()
	if err := os.WriteFile(n.path(name+".pid"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		return nil, err
	}
	n.procs = append(n.procs, p)
	logf("%s started (pid %d)", name, cmd.Process.Pid)
	return p, nil
}

var stopping = make(chan struct{})

func (p *proc) stop(grace time.Duration) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// stopAll stops the components in the reverse order of their start; before containerd,
// every Pod sandbox is stopped and removed through the CRI, which stops its containers
// and tears its network down.
func (n *Node) stopAll() {
	close(stopping)
	for i := len(n.procs) - 1; i >= 0; i-- {
		p := n.procs[i]
		if p.name == "containerd" {
			n.removePods()
		}
		p.stop(15 * time.Second)
		logf("%s stopped", p.name)
	}
	n.procs = nil
}

// removePods stops and removes every Pod sandbox (and so every container) of the node
// while containerd still runs.
func (n *Node) removePods() {
	crictl := filepath.Join(n.NodeAssets, "crictl")
	if _, err := os.Stat(crictl); err != nil || !socketAlive(n.Socket()) {
		return
	}
	cmd := exec.Command(crictl, "--runtime-endpoint", "unix://"+n.Socket(), "--timeout", "30s", "rmp", "--all", "--force")
	if out, err := cmd.CombinedOutput(); err != nil {
		logf("crictl rmp --all --force: %v: %s", err, out)
	}
}

func socketAlive(path string) bool {
	c, err := net.DialTimeout("unix", path, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// Clean removes what a run leaves outside its processes: containers (a runc shim outlives
// containerd), mounts under the directory, kube-proxy's iptables rules, the bridge, the
// kubelet's cgroups, and it puts ip_forward back. It is safe to run when nothing is left.
func (n *Node) Clean() {
	// Components of a killed run (their runner died; Pdeathsig normally took them).
	for _, name := range []string{"kube-proxy", "kubelet", "containerd", "kube-scheduler", "kube-controller-manager", "kube-apiserver", "etcd"} {
		killPidFile(n.path(name+".pid"), n.Dir)
	}
	// The shims of this node's containerd, and the containers they hold.
	for _, pid := range processesMentioning(n.Socket()) {
		logf("killing leftover process %d (a containerd shim of this node)", pid)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	for _, pid := range processesInCgroup("kubepods") {
		logf("killing leftover container process %d", pid)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	unmountUnder(n.Dir)
	if kp := filepath.Join(n.NodeAssets, "kube-proxy"); n.NodeAssets != "" {
		if _, err := os.Stat(kp); err == nil {
			if out, err := exec.Command(kp, "--cleanup").CombinedOutput(); err != nil {
				logf("kube-proxy --cleanup: %v: %s", err, lastLines(out, 5))
			}
		}
	}
	if _, err := net.InterfaceByName(Bridge); err == nil {
		if out, err := exec.Command("ip", "link", "del", Bridge).CombinedOutput(); err != nil {
			logf("ip link del %s: %v: %s", Bridge, err, out)
		}
	}
	// Veth ends left on the host side go with their network namespaces; the namespaces
	// are files under the state directory (netns_mounts_under_state_dir), unmounted above.
	removeCgroups("kubepods")
	removeIptables()
	n.removeSystemPaths()
	// containerd 1.6 keeps its shims' sockets in /run/containerd/s whatever its state
	// directory: remove what is empty once the shims are gone.
	for _, d := range []string{"/run/containerd/s", "/run/containerd/fifo", "/run/containerd/runc/" + ContainerdNS, "/run/containerd/runc", "/run/containerd"} {
		_ = syscall.Rmdir(d)
	}
	if old, err := os.ReadFile(n.path("ip_forward.old")); err == nil {
		_ = os.WriteFile("/proc/sys/net/ipv4/ip_forward", old, 0o644)
		_ = os.Remove(n.path("ip_forward.old"))
	}
	for _, name := range []string{"kube-proxy", "kubelet", "containerd", "kube-scheduler", "kube-controller-manager", "kube-apiserver", "etcd"} {
		_ = os.Remove(n.path(name + ".pid"))
	}
	_ = os.Remove(n.path("ready"))
}

func killPidFile(file, dir string) {
	b, err := os.ReadFile(file)
	if err != nil {
		return
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		return
	}
	// Only a process whose command line names the state directory is ours.
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !strings.Contains(string(cmdline), dir) {
		return
	}
	logf("killing leftover %s (pid %d)", filepath.Base(file), pid)
	_ = syscall.Kill(pid, syscall.SIGKILL)
	for range 50 {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// processesMentioning lists the processes whose command line contains s.
func processesMentioning(s string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), s) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// processesInCgroup lists the processes in a cgroup v1 hierarchy's subtree named top
// (the kubelet's kubepods) of the pids controller.
func processesInCgroup(top string) []int {
	var pids []int
	_ = filepath.WalkDir(filepath.Join("/sys/fs/cgroup/pids", top), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "cgroup.procs" {
			return nil
		}
		b, _ := os.ReadFile(p)
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids = append(pids, pid)
			}
		}
		return nil
	})
	return pids
}

// unmountUnder unmounts every mount point under dir, deepest first.
func unmountUnder(dir string) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return
	}
	var points []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && (f[4] == dir || strings.HasPrefix(f[4], dir+"/")) {
			points = append(points, f[4])
		}
	}
	for i := len(points) - 1; i >= 0; i-- {
		if err := syscall.Unmount(points[i], syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
			logf("umount %s: %v", points[i], err)
		}
	}
}

// removeCgroups removes the (empty, once the containers are gone) cgroups the kubelet
// made, deepest first, in every cgroup v1 hierarchy and the cgroup2 one.
func removeCgroups(top string) {
	hier, _ := os.ReadDir("/sys/fs/cgroup")
	for _, h := range hier {
		root := filepath.Join("/sys/fs/cgroup", h.Name(), top)
		var dirs []string
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			if err := syscall.Rmdir(dirs[i]); err != nil && !errors.Is(err, syscall.ENOENT) {
				logf("rmdir %s: %v", dirs[i], err)
			}
		}
	}
}

// removeSystemPaths removes what the tools write outside the directory whatever they are
// told: the kubelet's links in /var/log/containers (a path compiled in) and its device
// plugin socket in /var/lib/kubelet/device-plugins (idem), and the CNI result cache of
// containerd 1.6 in /var/lib/cni/results (not configurable there). Only this node's
// entries go; a directory goes only when that leaves it empty.
func (n *Node) removeSystemPaths() {
	if entries, err := os.ReadDir("/var/log/containers"); err == nil {
		for _, e := range entries {
			link := filepath.Join("/var/log/containers", e.Name())
			if target, err := os.Readlink(link); err == nil && strings.HasPrefix(target, n.Dir+"/") {
				_ = os.Remove(link)
			}
		}
	}
	if entries, err := os.ReadDir("/var/lib/cni/results"); err == nil {
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), "podium-e2e-") {
				_ = os.Remove(filepath.Join("/var/lib/cni/results", e.Name()))
			}
		}
	}
	_ = os.Remove("/var/lib/kubelet/device-plugins/kubelet.sock")
	for _, d := range []string{"/var/log/containers", "/var/lib/cni/results", "/var/lib/cni", "/var/lib/kubelet/device-plugins", "/var/lib/kubelet"} {
		_ = syscall.Rmdir(d)
	}
}

// removeIptables removes the KUBE-* chains and the jumps to them that the kubelet makes
// (KUBE-FIREWALL, KUBE-KUBELET-CANARY, KUBE-IPTABLES-HINT) and kube-proxy --cleanup
// leaves, for IPv4 and IPv6.
func removeIptables() {
	for _, bin := range []string{"iptables", "ip6tables"} {
		if _, err := exec.LookPath(bin); err != nil {
			continue
		}
		for _, table := range []string{"filter", "nat", "mangle"} {
			out, err := exec.Command(bin, "-w", "-t", table, "-S").Output()
			if err != nil {
				continue
			}
			var chains []string
			for _, line := range strings.Split(string(out), "\n") {
				f := splitRule(line)
				switch {
				case len(f) == 2 && f[0] == "-N" && strings.HasPrefix(f[1], "KUBE-"):
					chains = append(chains, f[1])
				case len(f) > 3 && f[0] == "-A" && !strings.HasPrefix(f[1], "KUBE-") && strings.Contains(line, "-j KUBE-"):
					args := append([]string{"-w", "-t", table, "-D"}, f[1:]...)
					if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
						logf("%s %s: %v: %s", bin, strings.Join(args, " "), err, out)
					}
				}
			}
			for _, c := range chains {
				_ = exec.Command(bin, "-w", "-t", table, "-F", c).Run()
			}
			for _, c := range chains {
				if out, err := exec.Command(bin, "-w", "-t", table, "-X", c).CombinedOutput(); err != nil {
					logf("%s -t %s -X %s: %v: %s", bin, table, c, err, out)
				}
			}
		}
	}
}

// splitRule splits a line of iptables -S into its arguments ("..." quotes a comment).
func splitRule(line string) []string {
	var (
		args  []string
		cur   strings.Builder
		quote bool
		any   bool
	)
	for _, r := range line {
		switch {
		case r == '"':
			quote, any = !quote, true
		case r == ' ' && !quote:
			if any {
				args = append(args, cur.String())
				cur.Reset()
				any = false
			}
		default:
			cur.WriteRune(r)
			any = true
		}
	}
	if any {
		args = append(args, cur.String())
	}
	return args
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func clientFor(kubeconfig string) (kubernetes.Interface, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.Timeout = 5 * time.Second
	return kubernetes.NewForConfig(cfg)
}

func waitFor(ctx context.Context, what string, limit time.Duration, cond func() (bool, error)) error {
	deadline := time.Now().Add(limit)
	for {
		ok, err := cond()
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if ok {
			logf("%s", what)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not within %s", what, limit)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", what, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}
