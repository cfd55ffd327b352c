//! `--host` as the commands take it: one host, or `all`.

use amplihack_protocol::Host;
use clap::ValueEnum;

use crate::scopes::Locations;

/// `--host`: one host (by [`Host::name`], the list [`Host::ALL`]), or `all` (Claude Code,
/// Amplifier and every other host found installed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostChoice {
    One(Host),
    All,
}

/// Every `--host` value: each host, then `all`.
const HOST_CHOICES: [HostChoice; Host::ALL.len() + 1] = {
    let mut choices = [HostChoice::All; Host::ALL.len() + 1];
    let mut i = 0;
    while i < Host::ALL.len() {
        choices[i] = HostChoice::One(Host::ALL[i]);
        i += 1;
    }
    choices
};

impl ValueEnum for HostChoice {
    fn value_variants<'a>() -> &'a [Self] {
        &HOST_CHOICES
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(match self {
            HostChoice::One(host) => host.name(),
            HostChoice::All => "all",
        }))
    }
}

/// `--host` where one host is meant (`amplihack hooks test`): any host, by [`Host::name`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostArg(pub Host);

impl ValueEnum for HostArg {
    fn value_variants<'a>() -> &'a [Self] {
        const ARGS: [HostArg; Host::ALL.len()] = {
            let mut args = [HostArg(Host::ClaudeCode); Host::ALL.len()];
            let mut i = 0;
            while i < Host::ALL.len() {
                args[i] = HostArg(Host::ALL[i]);
                i += 1;
            }
            args
        };
        &ARGS
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.0.name()))
    }
}

impl From<HostArg> for Host {
    fn from(host: HostArg) -> Self {
        host.0
    }
}

impl HostChoice {
    /// The one host chosen (`None` for `all`).
    pub fn host(self) -> Option<Host> {
        match self {
            HostChoice::One(host) => Some(host),
            HostChoice::All => None,
        }
    }

    /// Whether `host` is one the choice names (`all` names every host).
    pub fn includes(self, host: Host) -> bool {
        self.host().is_none_or(|h| h == host)
    }

    pub fn claude(self) -> bool {
        self.includes(Host::ClaudeCode)
    }

    pub fn amplifier(self) -> bool {
        self.includes(Host::Amplifier)
    }

    /// The hosts to act on: the one named, or for `all` every host found installed
    /// ([`super::found`]).
    pub fn hosts(self, locations: &Locations) -> Vec<Host> {
        match self.host() {
            Some(host) => vec![host],
            None => Host::ALL
                .into_iter()
                .filter(|h| super::found(*h, locations))
                .collect(),
        }
    }
}
