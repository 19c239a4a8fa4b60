package cli_test

import (
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The HTTP commands sign in with a Podium API key instead of the kubeconfig
// (docs/cli.md, "Signing in with an API key"): PODIUM_API_KEY or --api-key-file.
var _ = Describe("podium with an API key", func() {
	It("signs in as the key's creator with no kubeconfig, never shows the key, and names the refusal", func() {
		org, mem, _ := orgWithPeople("cli-apikey")
		key := strings.TrimSpace(mem.ok("", "auth", "api-key", "create", "--name", "cli"))
		Expect(key).To(HavePrefix("pdm_"))
		id := key[len("pdm_") : len("pdm_")+16]
		since := len(cliTranscript.String()) // creating printed the key, once

		// No kubeconfig at all: only the key signs in.
		nobody := member{user: mem.user, kubeconfig: filepath.Join(GinkgoT().TempDir(), "missing"), home: GinkgoT().TempDir()}
		withKey := []string{"PODIUM_API_KEY=" + key}

		By("secrets add / list / delete in the key's creator's default org")
		r := nobody.run("sk-apikey-cli-value-4321", withKey, "hub", "secrets", "add", "OPENAI_API_KEY")
		Expect(r.code).To(Equal(0), r.String())
		Expect(r.out).To(MatchRegexp(`Stored OPENAI_API_KEY \(user, \*\*\*\*4321, id [0-9a-f-]{36}\)`))
		r = nobody.run("", withKey, "hub", "secrets", "list")
		Expect(r.code).To(Equal(0), r.String())
		Expect(r.out).To(ContainSubstring("OPENAI_API_KEY"))
		By("the member sees the same secret through the kubeconfig: the key acted as the member")
		Expect(mem.ok("", "hub", "secrets", "list", "--org", org)).To(ContainSubstring("****4321"))

		By("registry credentials, and --api-key-file (- reads stdin)")
		keyFile := filepath.Join(nobody.home, "key")
		Expect(os.WriteFile(keyFile, []byte(key+"\n"), 0o600)).To(Succeed())
		r = nobody.run("", nil, "hub", "registry-credentials", "list", "--api-key-file", keyFile)
		Expect(r.code).To(Equal(0), r.String())
		r = nobody.run(key+"\n", nil, "hub", "secrets", "delete", "OPENAI_API_KEY", "--api-key-file", "-")
		Expect(r.code).To(Equal(0), r.String())
		Expect(r.out).To(ContainSubstring("Revoked OPENAI_API_KEY"))

		By("an API key cannot make keys")
		r = nobody.run("", withKey, "auth", "api-key", "create")
		Expect(r.code).NotTo(Equal(0), r.String())
		Expect(r.err).To(ContainSubstring("not with an API key"))

		By("a wrong key: a clear refusal naming where the key came from, never the key")
		wrong := "pdm_" + id + "_" + strings.Repeat("x", len(key)-len(id)-5)
		r = nobody.run("", []string{"PODIUM_API_KEY=" + wrong}, "hub", "secrets", "list")
		Expect(r.code).NotTo(Equal(0), r.String())
		Expect(r.err).To(ContainSubstring("Podium refused the API key in PODIUM_API_KEY"))
		Expect(r.err).NotTo(ContainSubstring(wrong[len(wrong)-12:]))
		r = nobody.run("", []string{"PODIUM_API_KEY="}, "hub", "secrets", "list")
		Expect(r.code).NotTo(Equal(0), r.String())
		Expect(r.err).To(ContainSubstring("PODIUM_API_KEY is empty"))

		By("revoked: refused within seconds")
		mem.ok("", "auth", "api-key", "revoke", id)
		Eventually(func() string { return nobody.run("", withKey, "hub", "secrets", "list").err }).Should(ContainSubstring("Podium refused the API key in PODIUM_API_KEY"))

		By("the key itself reached no output")
		Expect(cliTranscript.String()[since:]).NotTo(ContainSubstring(key[len(key)-16:]), "the API key's secret part in the CLI's output")
	})
})
