//! Traffic-manager configuration: the resolved settings and the JSON (or
//! YAML, parsed into the same value tree) they are read from.
//!
//! Everything is optional; an empty document is simple_switch's traffic
//! manager (64-packet queues, no rate, strict priority, FIFO). A document
//! looks like:
//!
//! ```json
//! {"priority_queues": 2, "queue_depth": 64, "wire_overhead_bytes": 24,
//!  "buffer": {"size_bytes": 16000000, "alpha": 1, "reserved_bytes": 0,
//!             "cell_bytes": 208, "ingress_alpha": 2},
//!  "defaults": {"rate_bps": "100G", "scheduler": "drr",
//!               "arbitration": {"mode": "groups", "group_size": 8, "first_port": 1},
//!               "queues": {"all": {"limit_bytes": 1000000, "ecn": {"threshold_bytes": 100000}}}},
//!  "ports": {"1-16": {"rate_bps": "100G"}, "31": {"queues": {"1": {"weight": 3}}}},
//!  "pfc": {"priorities": [3], "ports": "1-16", "xoff_bytes": 262144,
//!          "xon_bytes": 131072, "headroom_bytes": 32768, "quanta": 65535}}
//! ```
//!
//! A queue with `"strict": true` is served before the port's scheduler
//! picks among the others (highest strict queue first). `pfc` makes
//! priorities lossless ([`super::pfc`]).
//!
//! `ports` entries patch `defaults` (given keys only).
//!
//! Reserved space (`buffer.reserved_bytes`, `defaults.reserved_bytes` or a
//! port's own) belongs to the ports the document names under `ports` (a
//! range such as "1-32" names them all): their reserves leave the shared
//! pool when the configuration is applied, whether or not they carry
//! traffic, so the pool is the buffer less the named ports' reserves and
//! never changes with traffic. A port not named follows the defaults but
//! reserves nothing: the engine does not know which ports a switch has,
//! and carving on a port's first packet would shrink the pool (and every
//! congested queue's dynamic threshold) in the middle of a run. Runtime
//! calls that set one port (set_queue_depth, set_queue_rate,
//! set_port_rate) name it too, and carve its reserve then.
//!
//! The switch daemon's
//! older keys are accepted too: top-level `queue_depth`, `queue_rate_pps`,
//! and per port `queue_depth`, `rate_pps`. Errors name the offending path.

use super::pfc::PfcCfg;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt;

pub const MAX_QUEUES: usize = 8;
pub const DEFAULT_QUEUE_DEPTH: u32 = 64;
/// Preamble + start delimiter (8), inter-frame gap (12) and the FCS (4),
/// which engine packets do not carry.
pub const DEFAULT_WIRE_OVERHEAD: u32 = 24;
pub const DEFAULT_QUANTUM: u32 = 1518;
/// Ports are 9-bit in v1model; configs may name up to this port.
pub const MAX_PORT: u32 = 1023;

/// A configuration error: where in the document and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub path: String,
    pub msg: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "traffic manager config: {}", self.msg)
        } else {
            write!(f, "traffic manager config: {}: {}", self.path, self.msg)
        }
    }
}

type R<T> = Result<T, ConfigError>;

fn err<T>(path: &str, msg: impl Into<String>) -> R<T> {
    Err(ConfigError { path: path.to_string(), msg: msg.into() })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchedKind {
    /// Highest queue number first (simple_switch's priorities).
    Strict,
    /// One packet per non-empty queue in turn.
    RoundRobin,
    /// Weighted round robin by packets (weight = packets per round).
    Wrr,
    /// Deficit round robin by bytes (quantum = weight x 1518 bytes).
    Drr,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArbMode {
    /// One FIFO per queue: packets leave in arrival order (BMv2).
    Fifo,
    /// Per-ingress-port sub-queues (virtual output queues, each held to
    /// the queue's limits) served round robin by bytes.
    Fair,
    /// Ingress ports in groups: groups served round robin first, then the
    /// ports of the chosen group (the unfair arbitration of some ASICs).
    Groups,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cost {
    Bytes,
    Packets,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ArbCfg {
    pub mode: ArbMode,
    /// Explicit groups of ingress ports (mode Groups).
    pub groups: Vec<Vec<u32>>,
    /// Or consecutive blocks: ports first_port.. in groups of group_size.
    pub group_size: Option<u32>,
    pub first_port: u32,
    /// How groups are charged (ports are always charged in bytes).
    pub group_cost: Cost,
    pub quantum_bytes: u32,
}

impl Default for ArbCfg {
    fn default() -> Self {
        ArbCfg {
            mode: ArbMode::Fifo,
            groups: vec![],
            group_size: None,
            first_port: 0,
            group_cost: Cost::Bytes,
            quantum_bytes: DEFAULT_QUANTUM,
        }
    }
}

impl ArbCfg {
    /// The group of an ingress port: a configured group's index, or a
    /// group of its own (numbered after the configured ones).
    pub fn group_of(&self, port: u32) -> u32 {
        if let Some(n) = self.group_size {
            let n = n.max(1);
            if port >= self.first_port {
                return (port - self.first_port) / n;
            }
            return 100_000 + port;
        }
        for (i, g) in self.groups.iter().enumerate() {
            if g.contains(&port) {
                return i as u32;
            }
        }
        100_000 + port
    }
}

/// ECN marking of ECN-capable packets at enqueue: always above `threshold`,
/// or with a probability rising linearly from 0 at `min` to `pmax` at `max`
/// (and always above `max`). In bytes or packets of the queue.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EcnCfg {
    pub unit: Cost,
    pub min: u64,
    pub max: u64,
    pub pmax: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct QueueCfg {
    pub limit_pkts: Option<u32>,
    pub limit_bytes: Option<u64>,
    /// simple_switch's set_queue_rate: packets per second.
    pub rate_pps: Option<u64>,
    /// A shaper in bit/s (wire bits: overhead counted).
    pub rate_bps: Option<u64>,
    pub weight: u32,
    /// Dynamic threshold of the shared buffer (overrides the buffer's).
    pub alpha: Option<f64>,
    pub ecn: Option<EcnCfg>,
    /// Caps on what one ingress port may hold in this queue.
    pub ingress_limit_pkts: Option<u32>,
    pub ingress_limit_bytes: Option<u64>,
    /// Served before the scheduler's queues (strict priority above them).
    pub strict: bool,
}

impl Default for QueueCfg {
    fn default() -> Self {
        QueueCfg {
            limit_pkts: Some(DEFAULT_QUEUE_DEPTH),
            limit_bytes: None,
            rate_pps: None,
            rate_bps: None,
            weight: 1,
            alpha: None,
            ecn: None,
            ingress_limit_pkts: None,
            ingress_limit_bytes: None,
            strict: false,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct PortCfg {
    /// Line rate in bit/s; None: packets leave as soon as dequeued (BMv2).
    pub rate_bps: Option<u64>,
    pub sched: SchedKind,
    pub reserved_bytes: u64,
    pub arb: ArbCfg,
    pub queues: Vec<QueueCfg>,
}

impl Default for PortCfg {
    fn default() -> Self {
        PortCfg {
            rate_bps: None,
            sched: SchedKind::Strict,
            reserved_bytes: 0,
            arb: ArbCfg::default(),
            queues: vec![QueueCfg::default(); MAX_QUEUES],
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct BufferCfg {
    pub size_bytes: u64,
    pub alpha: Option<f64>,
    /// Buffer space is taken in cells of this many bytes (1: exact bytes).
    pub cell_bytes: u32,
    /// Dynamic threshold on what one ingress port holds in the buffer.
    pub ingress_alpha: Option<f64>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TmConfig {
    pub nb_queues: usize,
    pub wire_overhead: u32,
    pub buffer: Option<BufferCfg>,
    pub defaults: PortCfg,
    pub ports: BTreeMap<u32, PortCfg>,
    pub pfc: Option<PfcCfg>,
}

impl Default for TmConfig {
    fn default() -> Self {
        TmConfig {
            nb_queues: 1,
            wire_overhead: DEFAULT_WIRE_OVERHEAD,
            buffer: None,
            defaults: PortCfg::default(),
            ports: BTreeMap::new(),
            pfc: None,
        }
    }
}

impl TmConfig {
    pub fn port(&self, port: u32) -> &PortCfg {
        self.ports.get(&port).unwrap_or(&self.defaults)
    }

    /// The settings a port runs with: a named port's own; for the others
    /// the defaults without a reserve (see the module doc).
    pub fn live_port(&self, port: u32) -> PortCfg {
        match self.ports.get(&port) {
            Some(p) => p.clone(),
            None => PortCfg { reserved_bytes: 0, ..self.defaults.clone() },
        }
    }

    /// Space the named ports reserve: the buffer less this is the shared pool.
    pub fn reserved_total(&self) -> u64 {
        self.ports.values().map(|p| p.reserved_bytes).sum()
    }

    /// Space outside the shared pool: the ports' reserves and PFC headroom.
    pub fn carved_total(&self) -> u64 {
        self.reserved_total() + self.pfc.as_ref().map(|p| p.headroom_total()).unwrap_or(0)
    }

    /// The settings of one port, created from the defaults if needed.
    pub fn port_mut(&mut self, port: u32) -> &mut PortCfg {
        let d = self.defaults.clone();
        self.ports.entry(port).or_insert(d)
    }

    /// Parses a configuration document on top of `base` (usually the
    /// default configuration with the engine's number of queues).
    pub fn parse(doc: &Value, base: &TmConfig) -> R<TmConfig> {
        let obj = as_obj(doc, "")?;
        check_keys(
            obj,
            "",
            &[
                "priority_queues",
                "queue_depth",
                "queue_rate_pps",
                "wire_overhead_bytes",
                "buffer",
                "defaults",
                "ports",
                "pfc",
                "comment",
            ],
        )?;
        let mut cfg = base.clone();
        if let Some(v) = obj.get("priority_queues") {
            let n = as_u64(v, "priority_queues")?;
            if !(1..=MAX_QUEUES as u64).contains(&n) {
                return err("priority_queues", format!("{n} is out of range 1..8"));
            }
            cfg.nb_queues = n as usize;
        }
        if let Some(v) = obj.get("wire_overhead_bytes") {
            cfg.wire_overhead = as_u32(v, "wire_overhead_bytes")?;
        }
        if let Some(v) = obj.get("buffer") {
            cfg.buffer = if v.is_null() { None } else { Some(parse_buffer(v, "buffer")?) };
            if let Some(r) = v.get("reserved_bytes") {
                let r = as_size(r, "buffer.reserved_bytes")?;
                cfg.defaults.reserved_bytes = r;
                cfg.ports.values_mut().for_each(|p| p.reserved_bytes = r);
            }
            if obj.get("queue_depth").is_none() && cfg.buffer.is_some() {
                // with a shared buffer the buffer bounds the queues, not 64 packets
                lift_default_depth(&mut cfg.defaults);
                for p in cfg.ports.values_mut() {
                    lift_default_depth(p);
                }
            }
        }
        if let Some(v) = obj.get("queue_depth") {
            let d = opt_u32(v, "queue_depth")?;
            for q in &mut cfg.defaults.queues {
                q.limit_pkts = d;
            }
            for p in cfg.ports.values_mut() {
                p.queues.iter_mut().for_each(|q| q.limit_pkts = d);
            }
        }
        if let Some(v) = obj.get("queue_rate_pps") {
            let r = opt_u64(v, "queue_rate_pps")?.filter(|r| *r > 0);
            for q in &mut cfg.defaults.queues {
                q.rate_pps = r;
            }
            for p in cfg.ports.values_mut() {
                p.queues.iter_mut().for_each(|q| q.rate_pps = r);
            }
        }
        if let Some(v) = obj.get("defaults") {
            let d = parse_port(v, "defaults", &cfg.defaults)?;
            // ports not named below follow the new defaults
            cfg.defaults = d;
        }
        if let Some(v) = obj.get("ports") {
            let ports = as_obj(v, "ports")?;
            for (k, pv) in ports {
                let path = format!("ports.{k}");
                for port in port_set(k, &path)? {
                    let base = cfg.ports.get(&port).cloned().unwrap_or_else(|| cfg.defaults.clone());
                    let pc = parse_port(pv, &path, &base)?;
                    cfg.ports.insert(port, pc);
                }
            }
        }
        if let Some(b) = &cfg.buffer {
            let reserved: u64 = cfg.reserved_total();
            if reserved > b.size_bytes {
                return err(
                    "buffer.size_bytes",
                    format!("the ports' reserved space ({reserved} bytes) exceeds the buffer ({} bytes)", b.size_bytes),
                );
            }
        }
        if let Some(v) = obj.get("pfc") {
            cfg.pfc = if v.is_null() { None } else { Some(PfcCfg::parse(v, "pfc")?) };
        }
        if let Some(p) = &cfg.pfc {
            p.check(&cfg)?;
        }
        Ok(cfg)
    }
}

fn lift_default_depth(p: &mut PortCfg) {
    for q in &mut p.queues {
        if q.limit_pkts == Some(DEFAULT_QUEUE_DEPTH) {
            q.limit_pkts = None;
        }
    }
}

fn parse_buffer(v: &Value, path: &str) -> R<BufferCfg> {
    let o = as_obj(v, path)?;
    check_keys(o, path, &["size_bytes", "alpha", "cell_bytes", "ingress_alpha", "reserved_bytes"])?;
    let size = match o.get("size_bytes") {
        Some(s) => as_size(s, &format!("{path}.size_bytes"))?,
        None => return err(path, "size_bytes is required"),
    };
    if size == 0 {
        return err(&format!("{path}.size_bytes"), "must be positive");
    }
    let cell = match o.get("cell_bytes") {
        Some(c) => as_u32(c, &format!("{path}.cell_bytes"))?.max(1),
        None => 1,
    };
    Ok(BufferCfg {
        size_bytes: size,
        alpha: opt_alpha(o.get("alpha"), &format!("{path}.alpha"))?,
        cell_bytes: cell,
        ingress_alpha: opt_alpha(o.get("ingress_alpha"), &format!("{path}.ingress_alpha"))?,
    })
}

fn opt_alpha(v: Option<&Value>, path: &str) -> R<Option<f64>> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(x) => {
            let a = x.as_f64().ok_or(()).or_else(|_| err(path, "must be a number"))?;
            if !(a > 0.0) || !a.is_finite() {
                return err(path, "must be a positive number");
            }
            Ok(Some(a))
        }
    }
}

/// A port override: only the keys given change `base`.
pub fn parse_port(v: &Value, path: &str, base: &PortCfg) -> R<PortCfg> {
    let o = as_obj(v, path)?;
    check_keys(
        o,
        path,
        &["rate_bps", "scheduler", "reserved_bytes", "arbitration", "queues", "queue", "queue_depth", "rate_pps", "comment"],
    )?;
    let mut p = base.clone();
    if let Some(r) = o.get("rate_bps") {
        p.rate_bps = opt_rate(r, &format!("{path}.rate_bps"))?;
    }
    if let Some(s) = o.get("scheduler") {
        let sp = format!("{path}.scheduler");
        p.sched = match as_str(s, &sp)? {
            "strict" | "sp" => SchedKind::Strict,
            "rr" | "round_robin" => SchedKind::RoundRobin,
            "wrr" => SchedKind::Wrr,
            "drr" | "dwrr" => SchedKind::Drr,
            other => return err(&sp, format!("unknown scheduler '{other}' (strict, rr, wrr, drr)")),
        };
    }
    if let Some(r) = o.get("reserved_bytes") {
        p.reserved_bytes = as_size(r, &format!("{path}.reserved_bytes"))?;
    }
    if let Some(a) = o.get("arbitration") {
        p.arb = parse_arb(a, &format!("{path}.arbitration"), &p.arb)?;
    }
    // legacy per-port keys (all queues of the port)
    if let Some(d) = o.get("queue_depth") {
        let d = opt_u32(d, &format!("{path}.queue_depth"))?;
        p.queues.iter_mut().for_each(|q| q.limit_pkts = d);
    }
    if let Some(r) = o.get("rate_pps") {
        let r = opt_u64(r, &format!("{path}.rate_pps"))?.filter(|r| *r > 0);
        p.queues.iter_mut().for_each(|q| q.rate_pps = r);
    }
    if let Some(q) = o.get("queue") {
        let qp = format!("{path}.queue");
        for i in 0..MAX_QUEUES {
            p.queues[i] = parse_queue(q, &qp, &p.queues[i])?;
        }
    }
    if let Some(qs) = o.get("queues") {
        let qp = format!("{path}.queues");
        match qs {
            Value::Array(list) => {
                if list.len() > MAX_QUEUES {
                    return err(&qp, "at most 8 queues");
                }
                for (i, q) in list.iter().enumerate() {
                    p.queues[i] = parse_queue(q, &format!("{qp}[{i}]"), &p.queues[i])?;
                }
            }
            Value::Object(m) => {
                for (k, q) in m {
                    let kp = format!("{qp}.{k}");
                    let idx: Vec<u32> = if k == "all" { (0..MAX_QUEUES as u32).collect() } else { port_set(k, &kp)? };
                    for i in idx {
                        if i as usize >= MAX_QUEUES {
                            return err(&kp, format!("queue {i} is out of range 0..7"));
                        }
                        p.queues[i as usize] = parse_queue(q, &kp, &p.queues[i as usize])?;
                    }
                }
            }
            _ => return err(&qp, "expected an object {\"0\": {...}} or a list"),
        }
    }
    Ok(p)
}

fn parse_arb(v: &Value, path: &str, base: &ArbCfg) -> R<ArbCfg> {
    if let Value::String(s) = v {
        let mut a = base.clone();
        a.mode = arb_mode(s, path)?;
        return Ok(a);
    }
    let o = as_obj(v, path)?;
    check_keys(o, path, &["mode", "groups", "group_size", "first_port", "group_cost", "quantum_bytes", "comment"])?;
    let mut a = base.clone();
    if let Some(m) = o.get("mode") {
        a.mode = arb_mode(as_str(m, &format!("{path}.mode"))?, &format!("{path}.mode"))?;
    }
    if let Some(g) = o.get("groups") {
        let gp = format!("{path}.groups");
        let list = g.as_array().ok_or(()).or_else(|_| err(&gp, "expected a list of lists of ports"))?;
        let mut groups = vec![];
        let mut seen = std::collections::BTreeSet::new();
        for (i, grp) in list.iter().enumerate() {
            let ip = format!("{gp}[{i}]");
            let ports: Vec<u32> = match grp {
                Value::String(s) => port_set(s, &ip)?,
                Value::Array(xs) => {
                    let mut out = vec![];
                    for (j, x) in xs.iter().enumerate() {
                        out.push(as_port(x, &format!("{ip}[{j}]"))?);
                    }
                    out
                }
                _ => return err(&ip, "expected a list of ports or a range \"A-B\""),
            };
            for p in &ports {
                if !seen.insert(*p) {
                    return err(&ip, format!("port {p} is in two groups"));
                }
            }
            groups.push(ports);
        }
        a.groups = groups;
        a.group_size = None;
    }
    if let Some(n) = o.get("group_size") {
        let n = as_u32(n, &format!("{path}.group_size"))?;
        if n == 0 {
            return err(&format!("{path}.group_size"), "must be positive");
        }
        a.group_size = Some(n);
        a.groups.clear();
    }
    if let Some(f) = o.get("first_port") {
        a.first_port = as_port(f, &format!("{path}.first_port"))?;
    }
    if let Some(c) = o.get("group_cost") {
        let cp = format!("{path}.group_cost");
        a.group_cost = match as_str(c, &cp)? {
            "bytes" => Cost::Bytes,
            "packets" => Cost::Packets,
            other => return err(&cp, format!("'{other}': expected bytes or packets")),
        };
    }
    if let Some(q) = o.get("quantum_bytes") {
        a.quantum_bytes = as_u32(q, &format!("{path}.quantum_bytes"))?.max(1);
    }
    if a.mode == ArbMode::Groups && a.groups.is_empty() && a.group_size.is_none() {
        return err(path, "mode 'groups' needs groups (lists of ports) or group_size");
    }
    Ok(a)
}

fn arb_mode(s: &str, path: &str) -> R<ArbMode> {
    Ok(match s {
        "fifo" => ArbMode::Fifo,
        "fair" => ArbMode::Fair,
        "groups" => ArbMode::Groups,
        other => return err(path, format!("unknown arbitration '{other}' (fifo, fair, groups)")),
    })
}

fn parse_queue(v: &Value, path: &str, base: &QueueCfg) -> R<QueueCfg> {
    let o = as_obj(v, path)?;
    check_keys(
        o,
        path,
        &[
            "limit_pkts",
            "limit_bytes",
            "depth",
            "rate_pps",
            "rate_bps",
            "weight",
            "alpha",
            "ecn",
            "ingress_limit_pkts",
            "ingress_limit_bytes",
            "strict",
            "comment",
        ],
    )?;
    let mut q = base.clone();
    for key in ["limit_pkts", "depth"] {
        if let Some(x) = o.get(key) {
            q.limit_pkts = opt_u32(x, &format!("{path}.{key}"))?;
        }
    }
    if let Some(x) = o.get("limit_bytes") {
        q.limit_bytes = opt_size(x, &format!("{path}.limit_bytes"))?;
    }
    if let Some(x) = o.get("rate_pps") {
        q.rate_pps = opt_u64(x, &format!("{path}.rate_pps"))?.filter(|r| *r > 0);
    }
    if let Some(x) = o.get("rate_bps") {
        q.rate_bps = opt_rate(x, &format!("{path}.rate_bps"))?;
    }
    if let Some(x) = o.get("weight") {
        let w = as_u32(x, &format!("{path}.weight"))?;
        if w == 0 {
            return err(&format!("{path}.weight"), "must be positive");
        }
        q.weight = w;
    }
    if let Some(x) = o.get("alpha") {
        q.alpha = opt_alpha(Some(x), &format!("{path}.alpha"))?;
    }
    if let Some(x) = o.get("ecn") {
        q.ecn = if x.is_null() { None } else { Some(parse_ecn(x, &format!("{path}.ecn"))?) };
    }
    if let Some(x) = o.get("ingress_limit_pkts") {
        q.ingress_limit_pkts = opt_u32(x, &format!("{path}.ingress_limit_pkts"))?;
    }
    if let Some(x) = o.get("ingress_limit_bytes") {
        q.ingress_limit_bytes = opt_size(x, &format!("{path}.ingress_limit_bytes"))?;
    }
    if let Some(x) = o.get("strict") {
        q.strict = x.as_bool().ok_or(()).or_else(|_| err(&format!("{path}.strict"), "expected true or false"))?;
    }
    Ok(q)
}

fn parse_ecn(v: &Value, path: &str) -> R<EcnCfg> {
    let o = as_obj(v, path)?;
    check_keys(
        o,
        path,
        &["threshold_bytes", "threshold_pkts", "min_bytes", "max_bytes", "min_pkts", "max_pkts", "pmax"],
    )?;
    let get = |k: &str| -> R<Option<u64>> { o.get(k).map(|x| as_size(x, &format!("{path}.{k}"))).transpose() };
    let (unit, min, max) = if let Some(t) = get("threshold_bytes")? {
        (Cost::Bytes, t, t)
    } else if let Some(t) = get("threshold_pkts")? {
        (Cost::Packets, t, t)
    } else if let (Some(a), Some(b)) = (get("min_bytes")?, get("max_bytes")?) {
        (Cost::Bytes, a, b)
    } else if let (Some(a), Some(b)) = (get("min_pkts")?, get("max_pkts")?) {
        (Cost::Packets, a, b)
    } else {
        return err(path, "give threshold_bytes, threshold_pkts, or min_/max_ bytes or pkts");
    };
    if min > max {
        return err(path, "min is above max");
    }
    let pmax = match o.get("pmax") {
        Some(x) => {
            let p = x.as_f64().ok_or(()).or_else(|_| err(&format!("{path}.pmax"), "must be a number"))?;
            if !(0.0..=1.0).contains(&p) {
                return err(&format!("{path}.pmax"), "must be in 0..1");
            }
            p
        }
        None => 1.0,
    };
    Ok(EcnCfg { unit, min, max, pmax })
}

// ----- value helpers ------------------------------------------------------

pub(super) fn check_keys(o: &Map<String, Value>, path: &str, known: &[&str]) -> R<()> {
    for k in o.keys() {
        if !known.contains(&k.as_str()) {
            let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
            return err(&p, format!("unknown key (known: {})", known.join(", ")));
        }
    }
    Ok(())
}

pub(super) fn as_obj<'a>(v: &'a Value, path: &str) -> R<&'a Map<String, Value>> {
    v.as_object().ok_or(()).or_else(|_| err(path, "expected an object"))
}

fn as_str<'a>(v: &'a Value, path: &str) -> R<&'a str> {
    v.as_str().ok_or(()).or_else(|_| err(path, "expected a string"))
}

pub(super) fn as_u64(v: &Value, path: &str) -> R<u64> {
    if let Some(n) = v.as_u64() {
        return Ok(n);
    }
    if let Some(f) = v.as_f64() {
        if f >= 0.0 && f.fract() == 0.0 && f < 1.8e19 {
            return Ok(f as u64);
        }
    }
    err(path, "expected a non-negative integer")
}

fn as_u32(v: &Value, path: &str) -> R<u32> {
    let n = as_u64(v, path)?;
    u32::try_from(n).or_else(|_| err(path, "too large"))
}

fn as_port(v: &Value, path: &str) -> R<u32> {
    let p = as_u32(v, path)?;
    if p > MAX_PORT {
        return err(path, format!("port {p} is out of range 0..{MAX_PORT}"));
    }
    Ok(p)
}

fn opt_u32(v: &Value, path: &str) -> R<Option<u32>> {
    if v.is_null() {
        Ok(None)
    } else {
        as_u32(v, path).map(Some)
    }
}

fn opt_u64(v: &Value, path: &str) -> R<Option<u64>> {
    if v.is_null() {
        Ok(None)
    } else {
        as_u64(v, path).map(Some)
    }
}

/// A number with an optional SI suffix: 100e9, "100G", "25Gbps", "10 M".
pub fn parse_si(s: &str) -> Option<f64> {
    let t = s.trim().trim_end_matches("bps").trim_end_matches("bit/s").trim_end_matches('B').trim();
    let (num, mult) = match t.chars().last()? {
        'k' | 'K' => (&t[..t.len() - 1], 1e3),
        'M' => (&t[..t.len() - 1], 1e6),
        'G' => (&t[..t.len() - 1], 1e9),
        'T' => (&t[..t.len() - 1], 1e12),
        _ => (t, 1.0),
    };
    let x: f64 = num.trim().parse().ok()?;
    if x.is_finite() && x >= 0.0 {
        Some(x * mult)
    } else {
        None
    }
}

fn as_rate(v: &Value, path: &str) -> R<u64> {
    let x = match v {
        Value::String(s) => parse_si(s),
        other => other.as_f64().filter(|f| *f >= 0.0),
    };
    match x {
        Some(f) if f >= 1.0 && f < 1e16 => Ok(f.round() as u64),
        _ => err(path, "expected a rate in bit/s (a number, or a string such as \"100G\")"),
    }
}

fn opt_rate(v: &Value, path: &str) -> R<Option<u64>> {
    if v.is_null() {
        Ok(None)
    } else {
        as_rate(v, path).map(Some)
    }
}

/// Bytes: a number or a string with K/M/G (powers of ten), e.g. "16M".
pub(super) fn as_size(v: &Value, path: &str) -> R<u64> {
    let x = match v {
        Value::String(s) => parse_si(s),
        other => other.as_f64().filter(|f| *f >= 0.0),
    };
    match x {
        Some(f) if f < 1.8e19 => Ok(f.round() as u64),
        _ => err(path, "expected a size in bytes (a number, or a string such as \"16M\")"),
    }
}

fn opt_size(v: &Value, path: &str) -> R<Option<u64>> {
    if v.is_null() {
        Ok(None)
    } else {
        as_size(v, path).map(Some)
    }
}

/// "5", "1-16", "1,2,9-12" -> ports.
pub fn port_set(k: &str, path: &str) -> R<Vec<u32>> {
    let mut out = vec![];
    for part in k.split(',') {
        let part = part.trim();
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (part, part),
        };
        let (Ok(a), Ok(b)) = (a.parse::<u32>(), b.parse::<u32>()) else {
            return err(path, format!("'{k}' is not a port number, range A-B or list"));
        };
        if a > b || b > MAX_PORT {
            return err(path, format!("'{k}': bad range (ports are 0..{MAX_PORT})"));
        }
        out.extend(a..=b);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: Value) -> R<TmConfig> {
        TmConfig::parse(&v, &TmConfig::default())
    }

    #[test]
    fn empty_is_bmv2() {
        let c = parse(json!({})).unwrap();
        assert_eq!(c, TmConfig::default());
        assert_eq!(c.port(7).queues[0].limit_pkts, Some(64));
        assert_eq!(c.port(7).rate_bps, None);
    }

    #[test]
    fn legacy_daemon_keys() {
        let c = parse(json!({"queue_depth": 32, "ports": {"2": {"queue_depth": 8, "rate_pps": 1000}}})).unwrap();
        assert_eq!(c.port(1).queues[0].limit_pkts, Some(32));
        assert_eq!(c.port(2).queues[0].limit_pkts, Some(8));
        assert_eq!(c.port(2).queues[3].rate_pps, Some(1000));
    }

    #[test]
    fn ranges_patches_and_units() {
        let c = parse(json!({
            "defaults": {"rate_bps": "100G", "scheduler": "drr"},
            "ports": {"1-3,9": {"rate_bps": 25e9}, "5": {"queues": {"1": {"weight": 3, "limit_bytes": "1M"}}}}
        }))
        .unwrap();
        assert_eq!(c.port(2).rate_bps, Some(25_000_000_000));
        assert_eq!(c.port(9).rate_bps, Some(25_000_000_000));
        assert_eq!(c.port(4).rate_bps, Some(100_000_000_000));
        assert_eq!(c.port(5).sched, SchedKind::Drr);
        assert_eq!(c.port(5).queues[1].weight, 3);
        assert_eq!(c.port(5).queues[1].limit_bytes, Some(1_000_000));
    }

    #[test]
    fn buffer_lifts_the_64_packet_default() {
        let c = parse(json!({"buffer": {"size_bytes": "16M", "alpha": 1}})).unwrap();
        assert_eq!(c.port(1).queues[0].limit_pkts, None);
        let c = parse(json!({"buffer": {"size_bytes": 1000}, "queue_depth": 10})).unwrap();
        assert_eq!(c.port(1).queues[0].limit_pkts, Some(10));
    }

    #[test]
    fn groups_and_errors_name_the_path() {
        let c = parse(json!({"defaults": {"arbitration": {"mode": "groups", "groups": [[1, 2], "3-5"]}}})).unwrap();
        assert_eq!(c.defaults.arb.group_of(4), 1);
        assert_eq!(c.defaults.arb.group_of(9), 100_009);
        let c = parse(json!({"defaults": {"arbitration": {"mode": "groups", "group_size": 8, "first_port": 1}}})).unwrap();
        assert_eq!(c.defaults.arb.group_of(8), 0);
        assert_eq!(c.defaults.arb.group_of(9), 1);
        let e = parse(json!({"ports": {"3": {"queues": {"9": {}}}}})).unwrap_err();
        assert_eq!(e.path, "ports.3.queues.9");
        let e = parse(json!({"ports": {"x": {}}})).unwrap_err();
        assert_eq!(e.path, "ports.x");
        let e = parse(json!({"defaults": {"rate": 5}})).unwrap_err();
        assert_eq!(e.path, "defaults.rate");
        let e = parse(json!({"defaults": {"arbitration": {"mode": "groups", "groups": [[1], [1]]}}})).unwrap_err();
        assert!(e.msg.contains("two groups"));
        let e = parse(json!({"buffer": {"size_bytes": 10}, "ports": {"1": {"reserved_bytes": 20}}})).unwrap_err();
        assert_eq!(e.path, "buffer.size_bytes");
        assert!(parse(json!({"defaults": {"queue": {"ecn": {"min_bytes": 5, "max_bytes": 1}}}})).is_err());
    }

    #[test]
    fn si_numbers() {
        assert_eq!(parse_si("100G"), Some(100e9));
        assert_eq!(parse_si("25Gbps"), Some(25e9));
        assert_eq!(parse_si("1.5M"), Some(1.5e6));
        assert_eq!(parse_si("x"), None);
    }
}
