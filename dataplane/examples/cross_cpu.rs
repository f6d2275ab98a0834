//! How long a cache line takes to pass from one CPU to another: two
//! threads bounce a counter, each waiting for the other's step, and the
//! round trips are timed.
//!
//!     cargo run --release --example cross_cpu [ROUND_TRIPS]
//!
//! Work split over two threads pays only if what one thread hands the
//! other costs less to pass than to do: a simulated incast frame takes
//! about 120 ns to make, and its lines would cross twice (dataplane/
//! README.md, "Virtual time"). On a shared 2-vCPU VM here one way took
//! 46-79 ns, or 215-255 ns when the host had placed the vCPUs apart.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// The counter, alone on its cache lines.
#[repr(align(128))]
struct Line(AtomicU64);

/// Waits until `line` holds `value`.
fn wait_for(line: &Line, value: u64) {
    while line.0.load(Ordering::Acquire) != value {
        std::hint::spin_loop();
    }
}

fn main() {
    let trips: u64 = match std::env::args().nth(1) {
        None => 1_000_000,
        Some(s) => match s.parse() {
            Ok(n) if n > 0 => n,
            _ => {
                eprintln!("cross_cpu: ROUND_TRIPS must be a positive integer, not {s:?}");
                std::process::exit(2);
            }
        },
    };
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus < 2 {
        // two spinning threads on one CPU would pass the line once a time slice
        eprintln!("cross_cpu: needs two CPUs, this process may use {cpus}");
        std::process::exit(1);
    }
    let line = Arc::new(Line(AtomicU64::new(0)));
    let echo = {
        let line = Arc::clone(&line);
        std::thread::spawn(move || {
            for i in 0..trips {
                wait_for(&line, 2 * i + 1);
                line.0.store(2 * i + 2, Ordering::Release);
            }
        })
    };
    let start = Instant::now();
    for i in 0..trips {
        line.0.store(2 * i + 1, Ordering::Release);
        wait_for(&line, 2 * i + 2);
    }
    let round_trip = start.elapsed().as_nanos() as f64 / trips as f64;
    echo.join().expect("the echoing thread ends");
    println!(
        "{trips} round trips between two threads ({cpus} CPUs): {round_trip:.0} ns a round trip, \
         {:.0} ns one way",
        round_trip / 2.0
    );
}
