package validate

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/toolgate/toolgate/host/config"
)

const dir = "../kubernetes"

// objects are the decoded manifests, one of each kind.
type objects struct {
	deployment *appsv1.Deployment
	service    *corev1.Service
	configMap  *corev1.ConfigMap
	secret     *corev1.Secret
	ingress    *networkingv1.Ingress
}

// load decodes every manifest strictly: an unknown field (a typo, a field
// at the wrong level) is an error, as `kubectl apply --validate=strict`
// would make it.
func load(t *testing.T) objects {
	t.Helper()
	var o objects
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s: %v", dir, err)
	}
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range bytes.Split(src, []byte("\n---\n")) {
			var meta struct{ APIVersion, Kind string }
			if err := yaml.Unmarshal(doc, &meta); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			var into any
			switch meta.APIVersion + " " + meta.Kind {
			case "apps/v1 Deployment":
				o.deployment = &appsv1.Deployment{}
				into = o.deployment
			case "v1 Service":
				o.service = &corev1.Service{}
				into = o.service
			case "v1 ConfigMap":
				o.configMap = &corev1.ConfigMap{}
				into = o.configMap
			case "v1 Secret":
				o.secret = &corev1.Secret{}
				into = o.secret
			case "networking.k8s.io/v1 Ingress":
				o.ingress = &networkingv1.Ingress{}
				into = o.ingress
			default:
				t.Fatalf("%s: unexpected object %s %s", f, meta.APIVersion, meta.Kind)
			}
			if err := yaml.UnmarshalStrict(doc, into); err != nil {
				t.Errorf("%s: %v", f, err)
			}
		}
	}
	if o.deployment == nil || o.service == nil || o.configMap == nil || o.secret == nil || o.ingress == nil {
		t.Fatalf("missing manifests: %+v", o)
	}
	return o
}

func TestKustomizationListsEveryManifest(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		APIVersion string   `json:"apiVersion"`
		Kind       string   `json:"kind"`
		Resources  []string `json:"resources"`
	}
	if err := yaml.UnmarshalStrict(src, &k); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	for _, f := range files {
		if b := filepath.Base(f); b != "kustomization.yaml" && !slices.Contains(k.Resources, b) {
			t.Errorf("kustomization.yaml does not list %s", b)
		}
	}
	for _, r := range k.Resources {
		if _, err := os.Stat(filepath.Join(dir, r)); err != nil {
			t.Errorf("kustomization.yaml lists %s: %v", r, err)
		}
	}
}

// TestManifestsFitTogether checks what a cluster would only reveal at run
// time: names, labels, ports and probes that refer to each other.
func TestManifestsFitTogether(t *testing.T) {
	o := load(t)
	d := o.deployment
	if d.Spec.Replicas == nil || *d.Spec.Replicas < 2 {
		t.Errorf("replicas = %v, want several", d.Spec.Replicas)
	}
	pod := d.Spec.Template
	for k, v := range d.Spec.Selector.MatchLabels {
		if pod.Labels[k] != v {
			t.Errorf("the Deployment selector %s=%s does not match its pod labels %v", k, v, pod.Labels)
		}
	}
	for k, v := range o.service.Spec.Selector {
		if pod.Labels[k] != v {
			t.Errorf("the Service selector %s=%s matches no pod label (%v)", k, v, pod.Labels)
		}
	}
	if sc := pod.Spec.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		t.Error("the pod does not require a non-root user")
	}
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("want one container, got %d", len(pod.Spec.Containers))
	}
	c := pod.Spec.Containers[0]
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	probe := func(name string, p *corev1.Probe, path string) {
		if p == nil || p.HTTPGet == nil {
			t.Errorf("%s probe missing", name)
			return
		}
		if p.HTTPGet.Path != path {
			t.Errorf("%s probe path = %s, want %s", name, p.HTTPGet.Path, path)
		}
		if _, ok := ports[p.HTTPGet.Port.StrVal]; p.HTTPGet.Port.Type != intstr.String || !ok {
			t.Errorf("%s probe port %v is not a named container port", name, p.HTTPGet.Port.String())
		}
	}
	probe("liveness", c.LivenessProbe, "/healthz")
	probe("readiness", c.ReadinessProbe, "/readyz")
	for _, sp := range o.service.Spec.Ports {
		if _, ok := ports[sp.TargetPort.StrVal]; !ok {
			t.Errorf("Service port %s targets %v, not a container port", sp.Name, sp.TargetPort.String())
		}
	}

	// Config from the ConfigMap, read-only; secrets from the Secret.
	var cm *corev1.ConfigMapVolumeSource
	for _, v := range pod.Spec.Volumes {
		if v.ConfigMap != nil {
			cm = v.ConfigMap
			for _, m := range c.VolumeMounts {
				if m.Name == v.Name && !m.ReadOnly {
					t.Errorf("the config volume is mounted writable at %s", m.MountPath)
				}
			}
		}
	}
	if cm == nil || cm.Name != o.configMap.Name {
		t.Errorf("no volume mounts the ConfigMap %s", o.configMap.Name)
	} else if cm.DefaultMode == nil || *cm.DefaultMode&0o222 != 0 {
		t.Error("the config volume's defaultMode allows writing; 0444 tells toolgate the config is read-only")
	}
	fromSecret := slices.ContainsFunc(c.EnvFrom, func(e corev1.EnvFromSource) bool {
		return e.SecretRef != nil && e.SecretRef.Name == o.secret.Name
	})
	if !fromSecret {
		t.Errorf("the container does not take its environment from the Secret %s", o.secret.Name)
	}

	// The Ingress routes a session to one replica.
	if got := o.ingress.Annotations["nginx.ingress.kubernetes.io/upstream-hash-by"]; got != "$http_mcp_session_id" {
		t.Errorf("ingress upstream-hash-by = %q, want $http_mcp_session_id", got)
	}
	for _, r := range o.ingress.Spec.Rules {
		for _, p := range r.HTTP.Paths {
			b := p.Backend.Service
			if b == nil || b.Name != o.service.Name || !slices.ContainsFunc(o.service.Spec.Ports, func(sp corev1.ServicePort) bool { return sp.Name == b.Port.Name }) {
				t.Errorf("ingress path %s does not reach a port of Service %s", p.Path, o.service.Name)
			}
		}
	}

	// The configuration itself: toolgate loads it, its listeners are the
	// container's ports, its drain fits in the termination grace period,
	// and every variable it names comes from the Secret.
	cfg := loadConfig(t, o)
	if got := port(t, cfg.Serve.Listen); got != ports["mcp"] {
		t.Errorf("serve { listen } port %d is not the mcp container port %d", got, ports["mcp"])
	}
	if got := port(t, cfg.Serve.Ops.MetricsListen); got != ports["metrics"] {
		t.Errorf("serve { metrics { listen } } port %d is not the metrics container port %d", got, ports["metrics"])
	}
	grace := time.Duration(*pod.Spec.TerminationGracePeriodSeconds) * time.Second
	if cfg.Serve.Ops.DrainGrace >= grace {
		t.Errorf("drain_grace %v leaves no time to stop servers before the pod's terminationGracePeriodSeconds %v", cfg.Serve.Ops.DrainGrace, grace)
	}
}

// loadConfig loads the ConfigMap's toolgate.hcl with toolgate's loader;
// environment variables it reads must be keys of the Secret.
func loadConfig(t *testing.T, o objects) *config.Config {
	t.Helper()
	src, ok := o.configMap.Data["toolgate.hcl"]
	if !ok {
		t.Fatal("the ConfigMap has no toolgate.hcl")
	}
	path := filepath.Join(t.TempDir(), "toolgate.hcl")
	if err := os.WriteFile(path, []byte(src), 0o444); err != nil {
		t.Fatal(err)
	}
	cfg, diags := config.Load(path, config.LoadOptions{LookupEnv: func(name string) (string, bool) {
		_, ok := o.secret.StringData[name]
		if !ok {
			t.Errorf("the config reads $%s, which the Secret %s does not set", name, o.secret.Name)
		}
		return "set", ok
	}})
	if diags.HasErrors() {
		t.Fatalf("the ConfigMap's toolgate.hcl: %v", diags)
	}
	if cfg.Serve.TokenEnvVar == "" {
		t.Error("the config listens beyond loopback without serve { token_env_var }")
	}
	return cfg
}

var portRE = regexp.MustCompile(`:(\d+)$`)

func port(t *testing.T, addr string) int32 {
	t.Helper()
	m := portRE.FindStringSubmatch(addr)
	if m == nil {
		t.Fatalf("address %q has no port", addr)
	}
	var n int32
	for _, c := range m[1] {
		n = n*10 + c - '0'
	}
	return n
}

// TestDockerfile checks the image definition's promises, since docker
// cannot run here: multi-stage, non-root, the shipped plugins included.
func TestDockerfile(t *testing.T) {
	src, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	text := string(src)
	if n := regexp.MustCompile(`(?m)^FROM `).FindAllStringIndex(text, -1); len(n) < 2 {
		t.Error("the Dockerfile is not multi-stage")
	}
	users := regexp.MustCompile(`(?m)^USER (\S+)`).FindAllStringSubmatch(text, -1)
	if len(users) == 0 || strings.HasPrefix(users[len(users)-1][1], "0") || users[len(users)-1][1] == "root" {
		t.Errorf("the image does not end as a non-root USER: %v", users)
	}
	// The image builds what binaries.list marks "image": toolgate and
	// every shipped plugin.
	if !strings.Contains(text, "binaries.list") {
		t.Error("the Dockerfile does not build from binaries.list")
	}
	list, err := os.ReadFile("../../binaries.list")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(list), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || strings.HasPrefix(f[0], "#") {
			continue
		}
		shipped := f[0] == "toolgate" || strings.HasPrefix(f[0], "plugins/")
		if image := len(f) > 2 && f[2] == "image"; shipped != image {
			t.Errorf("binaries.list: %s is marked image=%v; toolgate and the plugins/ binaries (only) go into the image", f[0], image)
		}
	}
}
