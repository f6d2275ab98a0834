//! Priority flow control (IEEE 802.1Qbb) on ingress accounting: lossless
//! priorities per ingress port ("priority groups"), xoff/xon thresholds and
//! headroom, and the pause frames the switch sends upstream.
//!
//! A packet's priority is the egress queue the program gives it
//! (standard_metadata.priority). For a lossless (ingress port, priority)
//! the traffic manager counts what it holds in the buffer:
//! * while that stays within `xoff_bytes` and the shared pool has room,
//!   packets take shared space (egress queue limits and dynamic thresholds
//!   do not apply: a lossless queue is bounded by the pause, not by drops);
//! * a packet that would pass `xoff_bytes` (or finds the pool full) goes
//!   into the priority group's headroom, and the switch sends XOFF (a PFC
//!   frame with `quanta`) out of the ingress port. Headroom is carved out
//!   of the buffer when the configuration is applied (`headroom_bytes` for
//!   each lossless port and priority), so frames already in flight when the
//!   pause went out always fit; only a sender that ignores the pause can
//!   overrun it (then the packet is dropped, reason `headroom`);
//! * when the group's use falls to `xon_bytes` the switch sends XON (0
//!   quanta). While paused it sends XOFF again once half the quanta have
//!   passed, checked as the group's packets come and go.
//!
//! Pause time per (port, priority) is what the switch asked for: from each
//! XOFF for its quanta, cut short by XON.

use super::config::{as_obj, as_size, as_u64, check_keys, port_set, ConfigError, TmConfig, MAX_QUEUES};
use super::pfc_frame::{quanta_ps, Pause};
use serde_json::Value;

type R<T> = Result<T, ConfigError>;

fn err<T>(path: &str, msg: impl Into<String>) -> R<T> {
    Err(ConfigError { path: path.to_string(), msg: msg.into() })
}

/// Link speed assumed for a port without a line rate (pause quanta).
pub const DEFAULT_LINK_BPS: u64 = 100_000_000_000;

/// The `pfc` section of a traffic-manager document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PfcCfg {
    /// Lossless priorities, bit i for priority i.
    pub priorities: u8,
    /// Ingress ports whose lossless priorities are flow-controlled (sorted).
    pub ports: Vec<u32>,
    pub xoff_bytes: u64,
    pub xon_bytes: u64,
    /// Per (port, lossless priority), carved out of the buffer.
    pub headroom_bytes: u64,
    /// Pause time an XOFF carries (512-bit-time quanta).
    pub quanta: u16,
}

impl PfcCfg {
    #[inline]
    pub fn lossless(&self, port: u32, prio: usize) -> bool {
        prio < 8 && self.priorities & (1 << prio) != 0 && self.ports.binary_search(&port).is_ok()
    }

    /// Headroom of all lossless (port, priority) pairs together.
    pub fn headroom_total(&self) -> u64 {
        self.headroom_bytes * self.ports.len() as u64 * self.priorities.count_ones() as u64
    }

    /// Parses the `pfc` object (checked against the rest by `check`).
    pub fn parse(v: &Value, path: &str) -> R<PfcCfg> {
        let o = as_obj(v, path)?;
        check_keys(
            o,
            path,
            &["priorities", "ports", "xoff_bytes", "xon_bytes", "headroom_bytes", "quanta", "comment"],
        )?;
        let key = |k: &str| format!("{path}.{k}");
        let mut priorities = 0u8;
        let list: Vec<&Value> = match o.get("priorities") {
            Some(Value::Array(xs)) => xs.iter().collect(),
            Some(x) => vec![x],
            None => return err(&key("priorities"), "is required (the lossless priorities, e.g. [3])"),
        };
        for x in list {
            let p = as_u64(x, &key("priorities"))?;
            if p as usize >= MAX_QUEUES {
                return err(&key("priorities"), format!("priority {p} is out of range 0..7"));
            }
            priorities |= 1 << p;
        }
        if priorities == 0 {
            return err(&key("priorities"), "names no priority");
        }
        let mut ports = match o.get("ports") {
            Some(Value::String(s)) => port_set(s, &key("ports"))?,
            Some(Value::Array(xs)) => {
                let mut out = vec![];
                for x in xs {
                    out.extend(port_set(&as_u64(x, &key("ports"))?.to_string(), &key("ports"))?);
                }
                out
            }
            Some(x) => port_set(&as_u64(x, &key("ports"))?.to_string(), &key("ports"))?,
            None => {
                return err(&key("ports"), "is required (the ingress ports with lossless priorities, e.g. \"1-16\")")
            }
        };
        ports.sort_unstable();
        ports.dedup();
        let xoff = match o.get("xoff_bytes") {
            Some(x) => as_size(x, &key("xoff_bytes"))?,
            None => return err(&key("xoff_bytes"), "is required"),
        };
        if xoff == 0 {
            return err(&key("xoff_bytes"), "must be positive");
        }
        let xon = match o.get("xon_bytes") {
            Some(x) => as_size(x, &key("xon_bytes"))?,
            None => xoff / 2,
        };
        if xon > xoff {
            return err(&key("xon_bytes"), format!("{xon} bytes is above xoff_bytes ({xoff} bytes)"));
        }
        let headroom = match o.get("headroom_bytes") {
            Some(x) => as_size(x, &key("headroom_bytes"))?,
            None => return err(&key("headroom_bytes"), "is required (room for what arrives after a pause is sent)"),
        };
        if headroom == 0 {
            return err(&key("headroom_bytes"), "must be positive (room for what arrives after a pause is sent)");
        }
        let quanta = match o.get("quanta") {
            Some(x) => {
                let q = as_u64(x, &key("quanta"))?;
                if !(1..=0xffff).contains(&q) {
                    return err(&key("quanta"), format!("{q} is out of range 1..65535"));
                }
                q as u16
            }
            None => 0xffff,
        };
        Ok(PfcCfg { priorities, ports, xoff_bytes: xoff, xon_bytes: xon, headroom_bytes: headroom, quanta })
    }

    /// Checks the section against the rest of the configuration: a buffer,
    /// priorities that are queues, thresholds and headroom that fit.
    pub fn check(&self, cfg: &TmConfig) -> R<()> {
        let Some(b) = &cfg.buffer else {
            return err(
                "pfc",
                "needs a shared buffer (buffer.size_bytes): PFC counts what each ingress port holds in it",
            );
        };
        for p in 0..8 {
            if self.priorities & (1 << p) != 0 && p >= cfg.nb_queues {
                return err(
                    "pfc.priorities",
                    format!("priority {p} is not a queue (priority_queues is {}; set it to 8)", cfg.nb_queues),
                );
            }
        }
        if self.xoff_bytes > b.size_bytes {
            return err(
                "pfc.xoff_bytes",
                format!("{} bytes is above the buffer ({} bytes)", self.xoff_bytes, b.size_bytes),
            );
        }
        let reserved = cfg.reserved_total();
        let headroom = self.headroom_total();
        if reserved + headroom > b.size_bytes {
            return err(
                "pfc.headroom_bytes",
                format!(
                    "{} bytes for each of the {} lossless (port, priority) pairs ({headroom} bytes) does not fit in the buffer ({} bytes, {reserved} reserved by ports)",
                    self.headroom_bytes,
                    self.ports.len() * self.priorities.count_ones() as usize,
                    b.size_bytes
                ),
            );
        }
        let pool = b.size_bytes - reserved - headroom;
        if self.xoff_bytes > pool {
            return err(
                "pfc.xoff_bytes",
                format!(
                    "{} bytes is above the shared pool ({pool} bytes: the buffer less reserves and headroom)",
                    self.xoff_bytes
                ),
            );
        }
        Ok(())
    }
}

/// Where a lossless packet goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    Shared,
    Headroom,
    /// The headroom is full: the sender did not stop.
    Drop,
}

/// One priority group: an ingress port's lossless priority.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PgState {
    /// Bytes (cells) it holds in the shared pool and in its headroom.
    pub shared: u64,
    pub headroom: u64,
    pub peak_headroom: u64,
    pub peak_total: u64,
    /// XOFF sent and no XON since.
    pub paused: bool,
    pub xoff_frames: u64,
    pub xon_frames: u64,
    pub drops: u64,
    last_xoff_ns: u64,
    /// The pause asked for: [win_start, win_end), and earlier ones' total.
    win_start: u64,
    win_end: u64,
    closed_ns: u64,
}

impl PgState {
    /// Time the upstream sender was asked to stay paused, up to `now`.
    pub fn paused_ns(&self, now: u64) -> u64 {
        self.closed_ns + self.win_end.min(now).saturating_sub(self.win_start)
    }
}

/// A pause frame to send: out of `port`, for one priority.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PauseOut {
    pub port: u32,
    pub pause: Pause,
}

/// PFC's state: the priority groups and the frames to send.
#[derive(Clone, Debug)]
pub struct Pfc {
    pub cfg: PfcCfg,
    groups: Vec<[PgState; 8]>,
    pub outbox: Vec<PauseOut>,
}

impl Pfc {
    pub fn new(cfg: PfcCfg) -> Pfc {
        Pfc { cfg, groups: vec![], outbox: vec![] }
    }

    pub fn group(&self, port: u32, prio: usize) -> PgState {
        self.groups.get(port as usize).map(|g| g[prio & 7]).unwrap_or_default()
    }

    /// The groups that have seen traffic: (port, priority, state).
    pub fn groups(&self) -> impl Iterator<Item = (u32, usize, &PgState)> {
        self.groups.iter().enumerate().flat_map(|(port, g)| {
            g.iter().enumerate().filter(|(_, s)| **s != PgState::default()).map(move |(p, s)| (port as u32, p, s))
        })
    }

    fn group_mut(&mut self, port: u32, prio: usize) -> &mut PgState {
        let i = port as usize;
        if i >= self.groups.len() {
            self.groups.resize(i + 1, [PgState::default(); 8]);
        }
        &mut self.groups[i][prio & 7]
    }

    /// Where a packet of `cells` goes; `pool_fits`: the shared pool has room.
    pub fn place(&self, port: u32, prio: usize, cells: u64, pool_fits: bool) -> Place {
        let g = self.group(port, prio);
        if pool_fits && g.shared + cells <= self.cfg.xoff_bytes {
            Place::Shared
        } else if g.headroom + cells <= self.cfg.headroom_bytes {
            Place::Headroom
        } else {
            Place::Drop
        }
    }

    /// How long this configuration's XOFF pauses a port of `rate_bps`.
    pub fn pause_ns(&self, rate_bps: Option<u64>) -> u64 {
        quanta_ps(self.cfg.quanta, rate_bps.unwrap_or(DEFAULT_LINK_BPS) as f64).div_ceil(1000)
    }

    /// A packet was admitted (`headroom`: into the headroom, past xoff).
    pub fn charge(&mut self, port: u32, prio: usize, cells: u64, headroom: bool, now: u64, pause_ns: u64) {
        let quanta = self.cfg.quanta;
        let g = self.group_mut(port, prio);
        if headroom {
            g.headroom += cells;
            g.peak_headroom = g.peak_headroom.max(g.headroom);
        } else {
            g.shared += cells;
        }
        g.peak_total = g.peak_total.max(g.shared + g.headroom);
        let due = g.paused && now >= g.last_xoff_ns + pause_ns / 2;
        if (headroom && !g.paused) || due {
            self.xoff(port, prio, now, pause_ns, quanta);
        }
    }

    /// A packet left (dequeued).
    pub fn release(&mut self, port: u32, prio: usize, cells: u64, headroom: bool, now: u64, pause_ns: u64) {
        let (xon, quanta) = (self.cfg.xon_bytes, self.cfg.quanta);
        let g = self.group_mut(port, prio);
        if headroom {
            g.headroom = g.headroom.saturating_sub(cells);
        } else {
            g.shared = g.shared.saturating_sub(cells);
        }
        if !g.paused {
            return;
        }
        if g.shared + g.headroom <= xon {
            g.paused = false;
            g.xon_frames += 1;
            g.win_end = g.win_end.min(now);
            self.outbox.push(PauseOut { port, pause: Pause::one(prio as u8, 0) });
        } else if now >= g.last_xoff_ns + pause_ns / 2 {
            self.xoff(port, prio, now, pause_ns, quanta);
        }
    }

    /// A packet that found the headroom full.
    pub fn dropped(&mut self, port: u32, prio: usize) {
        self.group_mut(port, prio).drops += 1;
    }

    fn xoff(&mut self, port: u32, prio: usize, now: u64, pause_ns: u64, quanta: u16) {
        let g = self.group_mut(port, prio);
        g.paused = true;
        g.xoff_frames += 1;
        g.last_xoff_ns = now;
        if now < g.win_end {
            g.win_end = now + pause_ns;
        } else {
            g.closed_ns += g.win_end - g.win_start;
            g.win_start = now;
            g.win_end = now + pause_ns;
        }
        self.outbox.push(PauseOut { port, pause: Pause::one(prio as u8, quanta) });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(doc: Value) -> R<TmConfig> {
        TmConfig::parse(&doc, &TmConfig::default())
    }

    fn doc(pfc: Value) -> Value {
        json!({"priority_queues": 8, "buffer": {"size_bytes": 1_000_000}, "pfc": pfc})
    }

    #[test]
    fn a_section_parses_with_defaults() {
        let c = parse(doc(json!({"priorities": [3], "ports": "1-4", "xoff_bytes": 40000, "headroom_bytes": 8000})))
            .unwrap();
        let p = c.pfc.unwrap();
        assert_eq!((p.priorities, p.xon_bytes, p.quanta), (1 << 3, 20000, 0xffff));
        assert!(p.lossless(2, 3) && !p.lossless(2, 0) && !p.lossless(5, 3));
        assert_eq!(p.headroom_total(), 32000);
    }

    #[test]
    fn bad_sections_name_the_field() {
        let base =
            json!({"priorities": [3], "ports": "1-4", "xoff_bytes": 40000, "xon_bytes": 20000, "headroom_bytes": 8000});
        let with = |k: &str, v: Value| {
            let mut d = base.clone();
            d[k] = v;
            parse(doc(d)).unwrap_err()
        };
        assert_eq!(with("xoff_bytes", json!(2_000_000)).path, "pfc.xoff_bytes");
        assert!(with("xoff_bytes", json!(2_000_000)).msg.contains("above the buffer"));
        assert_eq!(with("xon_bytes", json!(50_000)).path, "pfc.xon_bytes");
        assert_eq!(with("headroom_bytes", json!(300_000)).path, "pfc.headroom_bytes");
        assert_eq!(with("priorities", json!([9])).path, "pfc.priorities");
        assert_eq!(with("quanta", json!(0)).path, "pfc.quanta");
        assert_eq!(with("ports", json!("x")).path, "pfc.ports");
        let e = parse(json!({"priority_queues": 8, "pfc": base.clone()})).unwrap_err();
        assert_eq!(e.path, "pfc");
        let e = parse(json!({"buffer": {"size_bytes": 1_000_000}, "pfc": base})).unwrap_err();
        assert_eq!(e.path, "pfc.priorities");
        assert!(e.msg.contains("priority_queues"));
    }

    #[test]
    fn xoff_past_the_threshold_and_xon_at_it() {
        let cfg = PfcCfg {
            priorities: 8,
            ports: vec![1],
            xoff_bytes: 1000,
            xon_bytes: 500,
            headroom_bytes: 300,
            quanta: 100,
        };
        let mut p = Pfc::new(cfg);
        assert_eq!(p.place(1, 3, 600, true), Place::Shared);
        p.charge(1, 3, 600, false, 0, 1000);
        p.charge(1, 3, 400, false, 0, 1000);
        assert!(p.outbox.is_empty(), "at xoff, not past it");
        assert_eq!(p.place(1, 3, 200, true), Place::Headroom);
        p.charge(1, 3, 200, true, 10, 1000);
        assert_eq!(p.outbox.pop(), Some(PauseOut { port: 1, pause: Pause::one(3, 100) }));
        assert_eq!(p.place(1, 3, 200, true), Place::Drop, "300 bytes of headroom");
        assert_eq!(p.place(1, 3, 100, false), Place::Headroom, "a full pool sends to headroom too");
        p.release(1, 3, 600, false, 400, 1000);
        assert!(p.outbox.is_empty(), "600 held: above xon, refresh not due");
        p.release(1, 3, 200, true, 600, 1000);
        assert_eq!(p.outbox.pop(), Some(PauseOut { port: 1, pause: Pause::one(3, 0) }));
        let g = p.group(1, 3);
        assert_eq!((g.xoff_frames, g.xon_frames, g.paused), (1, 1, false));
        assert_eq!(g.paused_ns(5000), 590, "from XOFF at 10 to XON at 600");
    }

    #[test]
    fn xoff_is_refreshed_while_above_xon() {
        let cfg =
            PfcCfg { priorities: 1, ports: vec![2], xoff_bytes: 100, xon_bytes: 10, headroom_bytes: 1000, quanta: 1 };
        let mut p = Pfc::new(cfg);
        p.charge(2, 0, 200, true, 0, 1000);
        p.charge(2, 0, 100, true, 499, 1000);
        assert_eq!(p.outbox.len(), 1);
        p.charge(2, 0, 100, true, 500, 1000);
        assert_eq!(p.outbox.len(), 2, "half the pause time passed");
        assert_eq!(p.group(2, 0).paused_ns(10_000), 1500, "0..1500: the refresh extended the pause");
    }
}
