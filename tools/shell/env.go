package shell

import (
	"net/url"
	"strings"
)

// secretWords mark a variable name as secret when they occur anywhere in it
// (case-insensitively).
var secretWords = []string{
	"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "AUTH",
	"PRIVATE", "SESSION", "COOKIE", "APIKEY", "API_KEY", "BEARER", "SIGNATURE", "CERT_PASS",
}

// secretPrefixes mark whole families of variables as secret.
var secretPrefixes = []string{
	"AWS_", "AZURE_", "ARM_CLIENT", "GOOGLE_APPLICATION_CREDENTIALS", "GCLOUD_", "GCP_", "GITHUB_",
	"GH_", "GITLAB_", "GL_TOKEN", "NPM_", "NODE_AUTH", "PYPI_", "TWINE_", "OPENAI_", "ANTHROPIC_",
	"HF_", "HUGGING", "DOCKER_", "VAULT_", "SNOWFLAKE_", "DATABRICKS_", "CLOUDFLARE_", "DIGITALOCEAN_",
	"HEROKU_", "STRIPE_", "SLACK_", "SENTRY_", "CAIRN_API", "KUBECONFIG", "PGPASS", "MYSQL_PWD",
	"CODECOV_", "CIRCLE_TOKEN", "TRAVIS_", "BUILDKITE_", "CI_JOB_TOKEN", "ACTIONS_", "SSH_",
	"GPG_", "GNUPG", "NETRC", "OP_", "BW_", "DOPPLER_",
}

// secretNames are exact names.
var secretNames = map[string]bool{
	"DATABASE_URL": true, "REDIS_URL": true, "MONGO_URL": true, "MONGODB_URI": true, "AMQP_URL": true,
	"DSN": true, "SENTRY_DSN": true, "PGPASSWORD": true, "HISTFILE": true,
}

// IsSecretName reports whether an environment variable name looks secret.
func IsSecretName(name string) bool {
	u := strings.ToUpper(name)
	// GIT_AUTHOR_NAME and friends are not secrets.
	if strings.HasPrefix(u, "GIT_AUTHOR_") {
		return false
	}
	if secretNames[u] || strings.HasSuffix(u, "_DSN") {
		return true
	}
	for _, w := range secretWords {
		if strings.Contains(u, w) {
			return true
		}
	}
	for _, p := range secretPrefixes {
		if strings.HasPrefix(u, p) {
			return true
		}
	}
	return false
}

// isSecretValue catches credentials carried in values: URLs with a
// password (scheme://user:pass@host) and private keys.
func isSecretValue(val string) bool {
	if strings.Contains(val, "-----BEGIN") && strings.Contains(val, "PRIVATE KEY") {
		return true
	}
	if i := strings.Index(val, "://"); i > 0 && strings.Contains(val[i:], "@") {
		if u, err := url.Parse(val); err == nil && u.User != nil {
			if _, ok := u.User.Password(); ok {
				return true
			}
		}
	}
	return false
}

// StripSecrets returns environ ("NAME=value" entries) without the
// variables that look secret by name (see IsSecretName) or by value (URLs
// with embedded passwords, private keys). Malformed entries are dropped.
// The order of the remaining entries is kept.
func StripSecrets(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		if IsSecretName(name) || isSecretValue(val) {
			continue
		}
		out = append(out, kv)
	}
	return out
}
