//! Loads BMv2 JSON files and reports which the engine accepts:
//! `cargo run --example load_json -- FILE...`
fn main() {
    let mut ok = 0;
    let mut bad = 0;
    for path in std::env::args().skip(1) {
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) => {
                println!("{path}: {e}");
                bad += 1;
                continue;
            }
        };
        match p4scope_dataplane::Switch::from_json(&text) {
            Ok(_) => ok += 1,
            Err(e) => {
                println!("{path}: {e}");
                bad += 1;
            }
        }
    }
    println!("{ok} loaded, {bad} rejected");
}
