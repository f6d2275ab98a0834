//! A small command-line reader: `--name value` options (repeatable), bare
//! `--flag`s, and the subcommand as the first word. Kept by hand so the
//! crate depends on libc only.

use std::collections::HashMap;

pub struct Args {
    pub command: String,
    values: HashMap<String, Vec<String>>,
    flags: Vec<String>,
}

/// Options that take no value; everything else starting with `--` takes one.
const FLAGS: &[&str] = &["--qdisc-bypass", "--help", "-h", "--no-ignore-outgoing"];

impl Args {
    pub fn parse(argv: &[String]) -> Result<Args, String> {
        let mut it = argv.iter();
        let command = it.next().cloned().unwrap_or_default();
        let mut values: HashMap<String, Vec<String>> = HashMap::new();
        let mut flags = Vec::new();
        while let Some(a) = it.next() {
            if FLAGS.contains(&a.as_str()) {
                flags.push(a.clone());
            } else if let Some(name) = a.strip_prefix("--") {
                let (name, value) = match name.split_once('=') {
                    Some((n, v)) => (n.to_string(), v.to_string()),
                    None => {
                        let v = it.next().ok_or_else(|| format!("--{name} needs a value"))?;
                        (name.to_string(), v.clone())
                    }
                };
                values.entry(name).or_default().push(value);
            } else {
                return Err(format!("unexpected argument '{a}'"));
            }
        }
        Ok(Args { command, values, flags })
    }

    pub fn flag(&self, name: &str) -> bool {
        self.flags.iter().any(|f| f == name)
    }

    pub fn all(&self, name: &str) -> Vec<String> {
        self.values.get(name).cloned().unwrap_or_default()
    }

    pub fn get(&self, name: &str) -> Option<String> {
        self.values.get(name).and_then(|v| v.last().cloned())
    }

    pub fn required(&self, name: &str) -> Result<String, String> {
        self.get(name).ok_or_else(|| format!("--{name} is required"))
    }

    pub fn num<T: std::str::FromStr>(&self, name: &str, default: T) -> Result<T, String> {
        match self.get(name) {
            None => Ok(default),
            Some(s) => s.parse().map_err(|_| format!("--{name}: '{s}' is not a valid number")),
        }
    }

    /// Rejects options and flags this subcommand does not know (`known`
    /// names them without `--`), so a typo or another subcommand's flag is
    /// an error and not a silently ignored setting.
    pub fn check_known(&self, known: &[&str]) -> Result<(), String> {
        let flags = self.flags.iter().filter(|f| !matches!(f.as_str(), "--help" | "-h"));
        for k in self.values.keys().map(String::as_str).chain(flags.map(|f| &f[2..])) {
            if !known.contains(&k) {
                return Err(format!("unknown option --{k} for '{}'", self.command));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn values_flags_and_repeats() {
        let a = Args::parse(&v(&["send", "--iface", "x", "--stream", "id=1", "--stream=id=2",
                                 "--qdisc-bypass"])).unwrap();
        assert_eq!(a.command, "send");
        assert_eq!(a.get("iface").as_deref(), Some("x"));
        assert_eq!(a.all("stream"), v(&["id=1", "id=2"]));
        assert!(a.flag("--qdisc-bypass"));
        assert!(a.check_known(&["iface", "stream", "qdisc-bypass"]).is_ok());
        assert!(a.check_known(&["iface", "qdisc-bypass"]).is_err());
        let e = a.check_known(&["iface", "stream"]).unwrap_err();
        assert_eq!(e, "unknown option --qdisc-bypass for 'send'");
        let h = Args::parse(&v(&["recv", "--iface", "x", "--help"])).unwrap();
        assert!(h.check_known(&["iface"]).is_ok());
    }

    #[test]
    fn missing_value_is_an_error() {
        assert!(Args::parse(&v(&["send", "--iface"])).is_err());
        assert!(Args::parse(&v(&["send", "stray"])).is_err());
    }
}
