//! `[[tool_servers]]` of `auto.toml` (supplement §4): each server's name, how it is reached
//! (MCP over Streamable HTTP at `url`, or over stdio by a `command` the operator names), the
//! orgs and playbooks it is bound to, `allowed`, `record_content`, `request_id`, `timeout`,
//! `headers` and, for a command, `env`, whose values are secrets read from the environment or a
//! file.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::limits::TOOL_CALL_TIMEOUT_MS_DEFAULT;

/// The longest name of a server, as a function's `tools` may name it.
pub const SERVER_NAME_CHARS_MAX: usize = 64;

/// Every tool server the operator configured.
#[derive(Clone, Debug, Default)]
pub struct ToolServers {
    servers: Vec<Arc<ToolServerConfig>>,
}

/// One configured tool server.
#[derive(Clone, Debug)]
pub struct ToolServerConfig {
    pub name: String,
    pub transport: Transport,
    /// The orgs whose playbooks may use it.
    pub orgs: Vec<String>,
    /// When set, only these playbooks, each `org/playbook`.
    pub playbooks: Option<Vec<String>>,
    /// When set, only these tools of the server are offered.
    pub allowed: Option<Vec<String>>,
    /// Whether a run keeps the arguments and results of its calls (true unless turned off).
    pub record_content: bool,
    /// Where a result carries the server's own request id, as a dotted path such as
    /// `meta.requestId` (the result's `_meta` is `meta`).
    pub request_id: Option<String>,
    /// The bound of one call, and of opening the server and listing its tools.
    pub timeout: Duration,
}

/// How the server is reached.
#[derive(Clone, Debug)]
pub enum Transport {
    /// MCP over Streamable HTTP, with headers sent on every request.
    Http {
        url: String,
        headers: Vec<(String, Secret)>,
        /// `ca_file`: PEM certificates of private authorities an `https` server's certificate
        /// may chain to, beside the machine's trusted roots; read at start.
        roots: Vec<Vec<u8>>,
    },
    /// MCP over stdio: the program and its arguments, started with only the variables of
    /// [`INHERITED_ENV_VARS`] from the server's environment and the entry's `env`.
    Stdio {
        command: Vec<String>,
        env: Vec<(String, Secret)>,
    },
}

/// The variables of the server's own environment a command's process is given, as the official
/// MCP SDKs give them (TypeScript's and Python's `DEFAULT_INHERITED_ENV_VARS`): enough to find
/// programs and a home, and none of the server's secrets (`ANTHROPIC_API_KEY` and the like).
/// The entry's `env` adds the others it needs.
#[cfg(not(windows))]
pub const INHERITED_ENV_VARS: [&str; 6] = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];
/// The variables of the server's own environment a command's process is given, as the official
/// MCP SDKs give them on Windows.
#[cfg(windows)]
pub const INHERITED_ENV_VARS: [&str; 12] = [
    "APPDATA",
    "HOMEDRIVE",
    "HOMEPATH",
    "LOCALAPPDATA",
    "PATH",
    "PROCESSOR_ARCHITECTURE",
    "SYSTEMDRIVE",
    "SYSTEMROOT",
    "TEMP",
    "USERNAME",
    "USERPROFILE",
    "PROGRAMFILES",
];

/// A secret value read at start; its text never appears in a log or a response.
#[derive(Clone)]
pub struct Secret {
    pub value: String,
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(..)")
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("tool_servers[{index}]{name}: {message}")]
pub struct ConfigError {
    pub index: usize,
    /// ` (name)` when the entry has one.
    pub name: String,
    pub message: String,
}

const KEYS: [&str; 12] = [
    "name",
    "url",
    "command",
    "orgs",
    "playbooks",
    "allowed",
    "record_content",
    "request_id",
    "timeout",
    "headers",
    "ca_file",
    "env",
];

impl ToolServers {
    /// Reads the `[[tool_servers]]` entries; a problem names the entry and the setting.
    pub fn from_config(entries: &[toml::Table]) -> Result<Self, ConfigError> {
        let mut servers: Vec<Arc<ToolServerConfig>> = Vec::new();
        for (index, entry) in entries.iter().enumerate() {
            let name = entry
                .get("name")
                .and_then(toml::Value::as_str)
                .map(|n| format!(" ({n})"))
                .unwrap_or_default();
            let error = |message: String| ConfigError {
                index,
                name: name.clone(),
                message,
            };
            let server = parse_entry(entry).map_err(error)?;
            if servers.iter().any(|s| s.name == server.name) {
                return Err(error(format!(
                    "the name {} is taken by another tool server",
                    server.name
                )));
            }
            servers.push(Arc::new(server));
        }
        Ok(Self { servers })
    }

    /// The servers set up for a playbook, in the configuration's order.
    pub fn for_playbook<'a>(
        &'a self,
        org: &'a str,
        playbook: &'a str,
    ) -> impl Iterator<Item = &'a Arc<ToolServerConfig>> + 'a {
        self.servers
            .iter()
            .filter(move |server| server.serves(org, playbook))
    }

    /// The server of this name when it is set up for the playbook.
    pub fn find(&self, org: &str, playbook: &str, name: &str) -> Option<Arc<ToolServerConfig>> {
        self.for_playbook(org, playbook)
            .find(|server| server.name == name)
            .cloned()
    }

    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// Every server's secrets (see [`ToolServerConfig::secrets`]), for the log to keep out.
    pub fn secrets(&self) -> Vec<&str> {
        self.servers.iter().flat_map(|s| s.secrets()).collect()
    }

    /// The longest bound of a call among the servers; zero without servers.
    pub fn longest_timeout(&self) -> Duration {
        self.servers
            .iter()
            .map(|s| s.timeout)
            .max()
            .unwrap_or(Duration::ZERO)
    }
}

impl ToolServerConfig {
    /// Whether the server is bound to this playbook.
    pub fn serves(&self, org: &str, playbook: &str) -> bool {
        self.orgs.iter().any(|o| o == org)
            && self.playbooks.as_ref().is_none_or(|playbooks| {
                playbooks
                    .iter()
                    .any(|p| p.split_once('/') == Some((org, playbook)))
            })
    }

    /// Whether the operator allows this tool of the server.
    pub fn allows(&self, tool: &str) -> bool {
        self.allowed
            .as_ref()
            .is_none_or(|allowed| allowed.iter().any(|a| a == tool))
    }

    /// The texts a result or an error of this server must never carry to a model, a record or
    /// the log: the values of its headers, or of the `env` its command is given.
    pub fn secrets(&self) -> Vec<&str> {
        let values = match &self.transport {
            Transport::Http { headers, .. } => headers,
            Transport::Stdio { env, .. } => env,
        };
        values
            .iter()
            .flat_map(|(_, secret)| secret_forms(&secret.value))
            .collect()
    }
}

/// A header's value and, for `Bearer x` or `Basic x`, the credential alone: a server that
/// echoes the token without its scheme must not leak it either.
fn secret_forms(value: &str) -> Vec<&str> {
    let mut forms = vec![value];
    if let Some((_, credential)) = value.split_once(' ')
        && !credential.trim().is_empty()
    {
        forms.push(credential.trim());
    }
    forms
}

fn parse_entry(entry: &toml::Table) -> Result<ToolServerConfig, String> {
    if let Some(key) = entry.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(format!(
            "{key} is not a setting of a tool server; the settings are {}",
            KEYS.join(", ")
        ));
    }
    let name = entry
        .get("name")
        .and_then(toml::Value::as_str)
        .ok_or("name is required: the name functions use in tools, such as graph")?;
    let name_ok = (1..=SERVER_NAME_CHARS_MAX).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !name_ok {
        return Err(format!(
            "name: expected 1 to {SERVER_NAME_CHARS_MAX} letters, digits, hyphens and underscores; got {name:?}"
        ));
    }
    let transport = parse_transport(entry)?;
    let orgs = strings(entry, "orgs")?.ok_or("orgs is required: the orgs the server serves")?;
    if orgs.is_empty() {
        return Err("orgs: expected at least one org".into());
    }
    let playbooks = strings(entry, "playbooks")?;
    for playbook in playbooks.iter().flatten() {
        match playbook.split_once('/') {
            Some((org, pb)) if !pb.is_empty() && orgs.iter().any(|o| o == org) => {}
            _ => {
                return Err(format!(
                    "playbooks: expected org/playbook with the org among orgs; got {playbook:?}"
                ));
            }
        }
    }
    let record_content = match entry.get("record_content") {
        None => true,
        Some(value) => value
            .as_bool()
            .ok_or("record_content: expected true or false")?,
    };
    let request_id = match entry.get("request_id") {
        None => None,
        Some(value) => Some(
            value
                .as_str()
                .filter(|path| !path.is_empty())
                .ok_or("request_id: expected a dotted path such as meta.requestId")?
                .to_owned(),
        ),
    };
    let timeout = match entry.get("timeout") {
        None => Duration::from_millis(TOOL_CALL_TIMEOUT_MS_DEFAULT),
        Some(value) => value.as_str().and_then(parse_duration).ok_or_else(|| {
            format!("timeout: expected a duration above zero such as \"30s\", \"500ms\" or \"2m\"; got {value}")
        })?,
    };
    Ok(ToolServerConfig {
        name: name.to_owned(),
        transport,
        orgs,
        playbooks,
        allowed: strings(entry, "allowed")?,
        record_content,
        request_id,
        timeout,
    })
}

fn parse_transport(entry: &toml::Table) -> Result<Transport, String> {
    match (entry.get("url"), entry.get("command")) {
        (Some(url), None) => {
            let url = url
                .as_str()
                .filter(|u| u.starts_with("http://") || u.starts_with("https://"))
                .ok_or("url: expected an http or https URL, such as http://127.0.0.1:9000/mcp")?;
            if entry.contains_key("env") {
                return Err("env: only a server started by command takes env".into());
            }
            let names = Names {
                one: "a header name",
                plural: "header names",
            };
            let headers = read_secrets(entry, "headers", names, |header| {
                http::HeaderName::from_bytes(header.as_bytes()).is_ok()
            })?;
            let roots = match entry.get("ca_file") {
                None => Vec::new(),
                Some(path) => {
                    let path = path
                        .as_str()
                        .ok_or("ca_file: expected the path of a PEM file of certificates")?;
                    if !url.starts_with("https://") {
                        return Err("ca_file: only a server reached by an https url takes one".into());
                    }
                    read_roots(path)?
                }
            };
            Ok(Transport::Http {
                url: url.to_owned(),
                headers,
                roots,
            })
        }
        (None, Some(_)) => {
            if entry.contains_key("headers") {
                return Err("headers: only a server reached by url takes headers".into());
            }
            let command = strings(entry, "command")?
                .filter(|c| !c.is_empty())
                .ok_or("command: expected the program and its arguments, such as [\"node\", \"server.js\"]")?;
            let names = Names {
                one: "an environment variable name",
                plural: "environment variable names",
            };
            let env = read_secrets(entry, "env", names, |variable| {
                !variable.is_empty() && !variable.contains(['=', '\0'])
            })?;
            Ok(Transport::Stdio { command, env })
        }
        (Some(_), Some(_)) => Err("set url or command, not both".into()),
        (None, None) => Err(
            "url or command is required: MCP over Streamable HTTP at a url, or over stdio by a command"
                .into(),
        ),
    }
}

/// A table of names and secrets, `headers` or `env`: each name checked, each value read as
/// [`read_secret`] reads it.
fn read_secrets(
    entry: &toml::Table,
    key: &str,
    names: Names,
    name_ok: impl Fn(&str) -> bool,
) -> Result<Vec<(String, Secret)>, String> {
    let Some(table) = entry.get(key) else {
        return Ok(Vec::new());
    };
    let table = table
        .as_table()
        .ok_or_else(|| format!("{key}: expected a table of {} and secrets", names.plural))?;
    let mut secrets = Vec::new();
    for (name, value) in table {
        if !name_ok(name) {
            return Err(format!("{key}.{name}: not {}", names.one));
        }
        secrets.push((name.clone(), read_secret(&format!("{key}.{name}"), value)?));
    }
    Ok(secrets)
}

/// The words for the names of a table of secrets.
struct Names {
    one: &'static str,
    plural: &'static str,
}

/// The certificates of a `ca_file`, each PEM block as its own text: at least one, all readable
/// as certificates by the TLS client (checked again when a client is built).
fn read_roots(path: &str) -> Result<Vec<Vec<u8>>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|error| format!("ca_file: cannot read {path}: {error}"))?;
    const END: &str = "-----END CERTIFICATE-----";
    let blocks: Vec<Vec<u8>> = text
        .split_inclusive(END)
        .filter(|block| block.contains("-----BEGIN CERTIFICATE-----") && block.ends_with(END))
        .map(|block| block.trim_start().as_bytes().to_vec())
        .collect();
    if blocks.is_empty() {
        return Err(format!(
            "ca_file: {path} holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
        ));
    }
    for block in &blocks {
        reqwest013::Certificate::from_pem(block).map_err(|error| {
            format!("ca_file: {path} holds a certificate that cannot be read: {error}")
        })?;
    }
    Ok(blocks)
}

fn strings(entry: &toml::Table, key: &str) -> Result<Option<Vec<String>>, String> {
    let Some(value) = entry.get(key) else {
        return Ok(None);
    };
    value
        .as_array()
        .and_then(|items| {
            items
                .iter()
                .map(|item| item.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
        })
        .map(Some)
        .ok_or_else(|| format!("{key}: expected a list of strings"))
}

/// A secret setting, `{ env = "NAME" }` or `{ file = "PATH" }`, never written inline.
pub fn read_secret(setting: &str, value: &toml::Value) -> Result<Secret, String> {
    let inline = || {
        format!(
            "{setting} must be read from the environment or a file: write {{ env = \"NAME\" }} or {{ file = \"PATH\" }}"
        )
    };
    let table = value.as_table().ok_or_else(inline)?;
    if let Some(variable) = table.get("env").and_then(toml::Value::as_str) {
        return std::env::var(variable)
            .map(|value| Secret {
                value: value.trim().to_owned(),
            })
            .map_err(|_| format!("{setting}: the environment variable {variable} is not set"));
    }
    if let Some(path) = table.get("file").and_then(toml::Value::as_str) {
        return std::fs::read_to_string(PathBuf::from(path))
            .map(|value| Secret {
                value: value.trim().to_owned(),
            })
            .map_err(|e| format!("{setting}: cannot read the file {path}: {}", e.kind()));
    }
    Err(inline())
}

/// `30s`, `500ms`, `2m`: a whole number and a unit, above zero.
pub fn parse_duration(text: &str) -> Option<Duration> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit())?;
    let (number, unit) = text.split_at(split);
    let number: u64 = number.parse().ok()?;
    let duration = match unit {
        "ms" => Duration::from_millis(number),
        "s" => Duration::from_secs(number),
        "m" => Duration::from_secs(number.checked_mul(60)?),
        _ => return None,
    };
    (!duration.is_zero()).then_some(duration)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn servers(text: &str) -> Result<ToolServers, String> {
        let file: toml::Table = toml::from_str(text).unwrap();
        let entries: Vec<toml::Table> = file["tool_servers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_table().unwrap().clone())
            .collect();
        ToolServers::from_config(&entries).map_err(|e| e.to_string())
    }

    #[test]
    fn the_supplement_example_is_read() {
        let path = std::env::temp_dir().join(format!("auto-tools-config-{}", std::process::id()));
        std::fs::write(&path, "Bearer s3cret-token\n").unwrap();
        let text = format!(
            r#"[[tool_servers]]
name = "graph"
url = "http://127.0.0.1:9000/mcp"
orgs = ["acme"]
allowed = ["search", "query"]
record_content = true
request_id = "meta.requestId"
timeout = "30s"
headers = {{ Authorization = {{ file = {:?} }} }}
"#,
            path.display().to_string()
        );
        let servers = servers(&text).unwrap();
        let graph = servers.find("acme", "campaigns", "graph").unwrap();
        assert!(graph.allows("search") && !graph.allows("delete"));
        assert_eq!(graph.timeout, Duration::from_secs(30));
        assert_eq!(graph.secrets(), ["Bearer s3cret-token", "s3cret-token"]);
        assert!(servers.find("other", "campaigns", "graph").is_none());
        assert!(!format!("{graph:?}").contains("s3cret"));
    }

    #[test]
    fn a_server_is_bound_to_orgs_and_optionally_playbooks() {
        let servers = servers(
            r#"[[tool_servers]]
name = "notes"
command = ["node", "notes.js"]
orgs = ["acme", "beta"]
playbooks = ["acme/campaigns"]
"#,
        )
        .unwrap();
        assert!(servers.find("acme", "campaigns", "notes").is_some());
        assert!(servers.find("acme", "other", "notes").is_none());
        assert!(servers.find("beta", "campaigns", "notes").is_none());
        let notes = servers.find("acme", "campaigns", "notes").unwrap();
        assert!(notes.record_content);
        // "30 seconds unless the operator sets another".
        assert_eq!(
            notes.timeout,
            Duration::from_millis(TOOL_CALL_TIMEOUT_MS_DEFAULT)
        );
        assert!(notes.allows("anything"));
    }

    #[test]
    fn problems_name_the_entry_and_the_setting() {
        let cases = [
            (
                "name = \"g\"\norgs = [\"a\"]",
                "tool_servers[0] (g): url or command is required: MCP over Streamable HTTP at a url, or over stdio by a command",
            ),
            (
                "name = \"g\"\nurl = \"http://x/mcp\"\ncommand = [\"x\"]\norgs = [\"a\"]",
                "tool_servers[0] (g): set url or command, not both",
            ),
            (
                "name = \"g\"\nurl = \"http://x/mcp\"\norgs = [\"a\"]\ntimeout = \"0s\"",
                "tool_servers[0] (g): timeout: expected a duration above zero such as \"30s\", \"500ms\" or \"2m\"; got \"0s\"",
            ),
            (
                "name = \"g\"\nurl = \"http://x/mcp\"\norgs = [\"a\"]\nheaders = { Authorization = \"Bearer x\" }",
                "tool_servers[0] (g): headers.Authorization must be read from the environment or a file: write { env = \"NAME\" } or { file = \"PATH\" }",
            ),
            (
                "name = \"g\"\nurl = \"http://x/mcp\"\norgs = [\"a\"]\nheaders = { Authorization = { env = \"AUTO_TOOLS_SURELY_UNSET\" } }",
                "tool_servers[0] (g): headers.Authorization: the environment variable AUTO_TOOLS_SURELY_UNSET is not set",
            ),
            (
                "name = \"g\"\nurl = \"http://x/mcp\"\norgs = [\"a\"]\nplaybooks = [\"b/main\"]",
                "tool_servers[0] (g): playbooks: expected org/playbook with the org among orgs; got \"b/main\"",
            ),
            (
                "name = \"g\"\nurl = \"http://x/mcp\"\norgs = [\"a\"]\nallow = [\"x\"]",
                "tool_servers[0] (g): allow is not a setting of a tool server; the settings are name, url, command, orgs, playbooks, allowed, record_content, request_id, timeout, headers, ca_file, env",
            ),
            (
                "name = \"g\"\nurl = \"http://x/mcp\"\norgs = [\"a\"]\nca_file = \"ca.pem\"",
                "tool_servers[0] (g): ca_file: only a server reached by an https url takes one",
            ),
            (
                "name = \"g\"\nurl = \"https://x/mcp\"\norgs = [\"a\"]\nca_file = \"/nonexistent/ca.pem\"",
                "tool_servers[0] (g): ca_file: cannot read /nonexistent/ca.pem: No such file or directory (os error 2)",
            ),
            (
                "name = \"g\"\nurl = \"https://x/mcp\"\norgs = [\"a\"]\nca_file = \"/etc/hostname\"",
                "tool_servers[0] (g): ca_file: /etc/hostname holds no PEM certificate (-----BEGIN CERTIFICATE-----)",
            ),
            (
                "name = \"g/h\"\nurl = \"http://x/mcp\"\norgs = [\"a\"]",
                "tool_servers[0] (g/h): name: expected 1 to 64 letters, digits, hyphens and underscores; got \"g/h\"",
            ),
            (
                "url = \"http://x/mcp\"\norgs = [\"a\"]",
                "tool_servers[0]: name is required: the name functions use in tools, such as graph",
            ),
            (
                "name = \"g\"\nurl = \"http://x/mcp\"\norgs = [\"a\"]\nenv = { TOKEN = { env = \"PATH\" } }",
                "tool_servers[0] (g): env: only a server started by command takes env",
            ),
            (
                "name = \"g\"\ncommand = [\"x\"]\norgs = [\"a\"]\nenv = { TOKEN = \"s3cret\" }",
                "tool_servers[0] (g): env.TOKEN must be read from the environment or a file: write { env = \"NAME\" } or { file = \"PATH\" }",
            ),
            (
                "name = \"g\"\ncommand = [\"x\"]\norgs = [\"a\"]\nenv = { \"A=B\" = { env = \"PATH\" } }",
                "tool_servers[0] (g): env.A=B: not an environment variable name",
            ),
            (
                "name = \"g\"\ncommand = [\"x\"]\norgs = [\"a\"]\nenv = [\"TOKEN\"]",
                "tool_servers[0] (g): env: expected a table of environment variable names and secrets",
            ),
        ];
        for (entry, expected) in cases {
            assert_eq!(
                servers(&format!("[[tool_servers]]\n{entry}\n")).unwrap_err(),
                expected
            );
        }
        let twice = "[[tool_servers]]\nname = \"g\"\ncommand = [\"x\"]\norgs = [\"a\"]\n";
        assert_eq!(
            servers(&format!("{twice}{twice}")).unwrap_err(),
            "tool_servers[1] (g): the name g is taken by another tool server"
        );
    }

    #[test]
    fn a_command_takes_env_whose_values_are_secrets() {
        let path = std::env::temp_dir().join(format!("auto-tools-env-{}", std::process::id()));
        std::fs::write(&path, "notes-s3cret\n").unwrap();
        let servers = servers(&format!(
            "[[tool_servers]]\nname = \"notes\"\ncommand = [\"node\", \"notes.js\"]\norgs = [\"acme\"]\nenv = {{ NOTES_TOKEN = {{ file = {:?} }} }}\n",
            path.display().to_string()
        ))
        .unwrap();
        let notes = servers.find("acme", "campaigns", "notes").unwrap();
        let Transport::Stdio { env, .. } = &notes.transport else {
            panic!("a command");
        };
        assert_eq!(env.len(), 1);
        assert_eq!(env[0].0, "NOTES_TOKEN");
        assert_eq!(notes.secrets(), ["notes-s3cret"]);
        assert!(!format!("{notes:?}").contains("s3cret"));
    }

    #[test]
    fn durations_take_a_unit() {
        assert_eq!(parse_duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Some(Duration::from_secs(120)));
        assert_eq!(parse_duration("30"), None);
        assert_eq!(parse_duration("1h"), None);
    }
}
