//! A minimal JSON writer for the reports (objects, arrays, numbers,
//! strings). Numbers that are not finite become null.

pub enum J {
    Null,
    Bool(bool),
    U(u64),
    I(i64),
    F(f64),
    S(String),
    A(Vec<J>),
    O(Vec<(String, J)>),
}

impl J {
    pub fn obj(items: Vec<(&str, J)>) -> J {
        J::O(items.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
    }

    pub fn us(v: &[u64]) -> J {
        J::A(v.iter().map(|x| J::U(*x)).collect())
    }

    pub fn opt_u(v: Option<u64>) -> J {
        v.map(J::U).unwrap_or(J::Null)
    }

    pub fn render(&self) -> String {
        let mut s = String::new();
        self.write(&mut s);
        s
    }

    fn write(&self, out: &mut String) {
        match self {
            J::Null => out.push_str("null"),
            J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            J::U(v) => out.push_str(&v.to_string()),
            J::I(v) => out.push_str(&v.to_string()),
            J::F(v) => {
                if v.is_finite() {
                    out.push_str(&format!("{v}"));
                } else {
                    out.push_str("null");
                }
            }
            J::S(s) => write_str(s, out),
            J::A(items) => {
                out.push('[');
                for (i, x) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    x.write(out);
                }
                out.push(']');
            }
            J::O(items) => {
                out.push('{');
                for (i, (k, v)) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_str(k, out);
                    out.push(':');
                    v.write(out);
                }
                out.push('}');
            }
        }
    }
}

fn write_str(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders() {
        let j = J::obj(vec![
            ("a", J::U(1)),
            ("b", J::A(vec![J::F(1.5), J::F(f64::NAN), J::Null, J::Bool(true), J::I(-3)])),
            ("c", J::S("x\"y\n\u{1}".into())),
        ]);
        assert_eq!(j.render(), r#"{"a":1,"b":[1.5,null,null,true,-3],"c":"x\"y\n\u0001"}"#);
    }
}
