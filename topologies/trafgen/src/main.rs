//! p4scope-trafgen: a real-time traffic generator (`send`) and analyzer
//! (`recv`) for emulated hosts. Streams carry a sequence number and a
//! transmit timestamp in every frame (packet.rs); the analyzer reports loss,
//! reordering, duplicates, latency and jitter per stream. Reports are JSON,
//! read by p4scope.topologies.traffic.
//!
//! Layers: args/stream parse the command line, packet builds and finds
//! frames, sock the sockets (over the shared crates/afpacket), clocks and
//! stop signal, sender/receiver are the two loops, stats the per-stream
//! analysis, json the output.

mod args;
mod json;
mod packet;
mod receiver;
mod runs;
mod sender;
mod sock;
mod stats;
mod stream;

use std::io::Write;

const USAGE: &str = "\
usage:
  p4scope-trafgen send --iface IF --stream SPEC [--stream SPEC ...] [--duration S]
                       [--batch N] [--seed N] [--max-lag-us N] [--spin-us N] [--qdisc-bypass]
                       [--out FILE]
  p4scope-trafgen recv --iface IF [--duration S] [--idle S] [--count N] [--interval-ms N]
                       [--hist-us E1,E2,...] [--ring-mb N] [--snaplen N] [--no-ignore-outgoing]
                       [--out FILE]

SPEC is key=value,... with keys:
  id (0..65535, required), dst, src (MAC), ip_src, ip_dst, sport, dport, dscp, ttl,
  sport_span, src_span, ip_src_span, ip_dst_span (use N values in turn from the first),
  proto (udp|eth), size (64 | list:64/128 | imix:64:7/570:4/1518:1),
  rate (max | N pps/kpps/Mpps | N bps/kbps/Mbps/Gbps | N% with line=10Gbps),
  burst (frames back to back), count, start (s), duration (s).
Frame sizes include the 4-byte FCS; bit rates count 20 bytes of preamble and gap.
recv prints 'ready' on stderr once it listens; --no-ignore-outgoing counts the frames
this host sends on IF too. SIGINT/SIGTERM end a run and
still write the report (marked interrupted).";

fn write_out(path: Option<String>, text: &str) -> Result<(), String> {
    match path {
        None => {
            let mut o = std::io::stdout();
            writeln!(o, "{text}").map_err(|e| format!("stdout: {e}"))
        }
        Some(p) => {
            // atomic: a reader never sees half a report
            let tmp = format!("{p}.tmp{}", std::process::id());
            std::fs::write(&tmp, format!("{text}\n")).map_err(|e| format!("{tmp}: {e}"))?;
            std::fs::rename(&tmp, &p).map_err(|e| format!("{p}: {e}"))
        }
    }
}

fn parse_edges(s: &str) -> Result<Vec<u64>, String> {
    let mut v = Vec::new();
    for x in s.split(',') {
        let us: f64 = x.parse().map_err(|_| format!("--hist-us: '{x}' is not a number"))?;
        v.push((us * 1000.0).round() as u64);
    }
    if v.windows(2).any(|w| w[0] >= w[1]) {
        return Err("--hist-us: edges must be increasing".into());
    }
    Ok(v)
}

fn run(argv: &[String]) -> Result<(), (i32, String)> {
    let usage = |m: String| (2, format!("{m}\n{USAGE}"));
    let a = args::Args::parse(argv).map_err(usage)?;
    if a.flag("--help") || a.flag("-h") || a.command.is_empty() {
        println!("{USAGE}");
        return Ok(());
    }
    match a.command.as_str() {
        "send" => {
            a.check_known(&["iface", "stream", "duration", "batch", "seed", "max-lag-us", "spin-us", "out",
                            "qdisc-bypass"]).map_err(usage)?;
            let streams = a
                .all("stream")
                .iter()
                .map(|s| stream::parse_stream(s).map_err(|e| format!("--stream '{s}': {e}")))
                .collect::<Result<Vec<_>, _>>()
                .map_err(usage)?;
            if streams.is_empty() {
                return Err(usage("send needs at least one --stream".into()));
            }
            let mut ids: Vec<u16> = streams.iter().map(|s| s.id).collect();
            ids.sort();
            if ids.windows(2).any(|w| w[0] == w[1]) {
                return Err(usage("stream ids must be unique".into()));
            }
            let duration: Option<f64> = a.get("duration").map(|d| d.parse()).transpose()
                .map_err(|_| usage("--duration: not a number".into()))?;
            if duration.is_none() && streams.iter().any(|s| s.count.is_none() && s.duration.is_none()) {
                return Err(usage("give --duration, or count= or duration= for every stream".into()));
            }
            let cfg = sender::SendConfig {
                iface: a.required("iface").map_err(usage)?,
                streams,
                duration,
                batch: a.num("batch", 64usize).map_err(usage)?.clamp(1, 1024),
                seed: a.num("seed", 1u64).map_err(usage)?,
                qdisc_bypass: a.flag("--qdisc-bypass"),
                max_lag_ns: a.num("max-lag-us", 5000.0f64).map_err(usage)? * 1000.0,
                spin_ns: a.num("spin-us", 0.0f64).map_err(usage)? * 1000.0,
            };
            sock::install_stop_handler();
            let report = sender::run(&cfg).map_err(|e| (1, e))?;
            write_out(a.get("out"), &report.render()).map_err(|e| (1, e))
        }
        "recv" => {
            a.check_known(&["iface", "duration", "idle", "count", "interval-ms", "hist-us", "ring-mb",
                            "snaplen", "out", "no-ignore-outgoing"]).map_err(usage)?;
            let opt_f = |k: &str| -> Result<Option<f64>, (i32, String)> {
                a.get(k).map(|d| d.parse::<f64>()).transpose().map_err(|_| usage(format!("--{k}: not a number")))
            };
            let cfg = receiver::RecvConfig {
                iface: a.required("iface").map_err(usage)?,
                duration: opt_f("duration")?,
                idle: opt_f("idle")?,
                count: a.get("count").map(|c| c.parse()).transpose().map_err(|_| usage("--count: not a number".into()))?,
                interval_ns: (a.num("interval-ms", 100.0f64).map_err(usage)? * 1e6).max(1000.0) as u64,
                hist_edges_ns: match a.get("hist-us") {
                    Some(s) => parse_edges(&s).map_err(usage)?,
                    None => stats::default_edges_ns(),
                },
                ring_mb: a.num("ring-mb", 32usize).map_err(usage)?,
                snaplen: a.num("snaplen", 160u32).map_err(usage)?.max(64),
                outgoing: a.flag("--no-ignore-outgoing"),
            };
            sock::install_stop_handler();
            let report = receiver::run(&cfg, || {
                eprintln!("ready");
                let _ = std::io::stderr().flush();
            })
            .map_err(|e| (1, e))?;
            write_out(a.get("out"), &report.render()).map_err(|e| (1, e))
        }
        "version" => {
            println!("p4scope-trafgen {}", env!("CARGO_PKG_VERSION"));
            Ok(())
        }
        other => Err(usage(format!("unknown command '{other}'"))),
    }
}

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if let Err((code, msg)) = run(&argv) {
        eprintln!("p4scope-trafgen: {msg}");
        std::process::exit(code);
    }
}
