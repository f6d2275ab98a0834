//! Checks the native parser, deparser, actions and control flow against
//! the interpreter on BMv2 JSON files:
//! `cargo run --release --example native_diff -- [--frames N] FILE...`
//!
//! For each program that loads, runs N frames that walk its parser's
//! transitions (`fuzzing::parser_walk_frames`) through its native parser
//! and the interpreter, and through its native deparser and the
//! interpreter's (after the same random changes to the PHV), and through
//! its ingress and egress pipelines with their native code and without
//! (after more such changes), and reports any difference. Exits 1 when one
//! differs.
use p4scope_dataplane::fuzzing::{
    interpreted, native_deparse_mismatch, native_parse_mismatch, native_pipeline_mismatch, parser_walk_frames, Rng,
};

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut frames = 2000;
    if let Some(i) = args.iter().position(|a| a == "--frames") {
        match args.get(i + 1).and_then(|n| n.parse().ok()) {
            Some(n) => frames = n,
            None => {
                eprintln!("--frames: give a number");
                std::process::exit(2);
            }
        }
        args.drain(i..i + 2);
    }
    let (mut loaded, mut parsers, mut deparsers, mut states, mut all_states, mut differ) = (0, 0, 0, 0, 0, 0);
    let (mut controls, mut tests, mut inlined, mut native_actions) = (0, 0, 0, 0);
    for path in &args {
        let Ok(text) = std::fs::read_to_string(path) else {
            println!("{path}: unreadable");
            continue;
        };
        let Ok(p) = p4scope_dataplane::json::load(&text) else { continue };
        loaded += 1;
        if let Some(np) = &p.native_parser {
            parsers += 1;
            states += np.states;
            all_states += p.parser.states.len();
        }
        if p.native_deparser.is_some() {
            deparsers += 1;
        }
        for c in &p.native_controls {
            controls += 1;
            tests += c.tests;
            inlined += c.inlined;
        }
        native_actions += p.action_plans.iter().flatten().filter(|a| a.native_writes() > 0).count();
        let plain = interpreted(p.clone());
        let mut rng = Rng::new(loaded as u64);
        for (i, f) in parser_walk_frames(&p, 1 + loaded as u64, frames).iter().enumerate() {
            let d = native_parse_mismatch(&p, &plain, f)
                .or_else(|| native_deparse_mismatch(&p, &plain, f, &mut rng))
                .or_else(|| native_pipeline_mismatch(&p, &plain, f, &mut rng));
            if let Some(d) = d {
                println!("{path}: frame {i}: {d}");
                differ += 1;
                break;
            }
        }
    }
    println!(
        "{loaded} programs loaded: {parsers} with a native parser ({states} of their {all_states} states \
         translated), {deparsers} with a native deparser, {native_actions} actions with native writes, \
         {controls} pipelines with native control flow ({tests} conditionals, {inlined} tables inlined); \
         {differ} differing, {frames} frames each"
    );
    std::process::exit(i32::from(differ > 0));
}
