//! Control API of action profiles and selectors, with BMv2 runtime names
//! (act_prof_*, table_indirect_*), and of idle timeouts.

use super::{EngineError, Switch};
use crate::program::MatchValue;
use crate::tables::profile::{ProfileError, Ref};
use crate::value::Val;

impl Switch {
    pub fn profile_id(&self, name: &str) -> Result<u32, EngineError> {
        Self::lookup_name(&self.prog.names.profiles, "action profile", name)
    }

    fn prof_err(&self, p: u32, e: ProfileError) -> EngineError {
        EngineError::Invalid(format!("action profile '{}': {e}", self.prog.profiles[p as usize].name))
    }

    /// A table implemented by the profile (its actions are the members').
    fn profile_table(&self, p: u32) -> Result<u32, EngineError> {
        self.prog
            .tables
            .iter()
            .position(|t| t.profile == Some(p))
            .map(|i| i as u32)
            .ok_or_else(|| EngineError::Invalid(format!("action profile '{}' implements no table", self.prog.profiles[p as usize].name)))
    }

    fn member_action(&self, p: u32, action: &str, args: &[Val]) -> Result<(u32, Vec<Val>), EngineError> {
        let t = self.profile_table(p)?;
        let a = self.action_id(t, action)?;
        Ok((a, self.action_data(t, a, args)?))
    }

    pub fn act_prof_create_member(&mut self, profile: &str, action: &str, args: &[Val]) -> Result<u32, EngineError> {
        let p = self.profile_id(profile)?;
        let (a, data) = self.member_action(p, action, args)?;
        self.rt.profiles[p as usize].create_member(a, data).map_err(|e| self.prof_err(p, e))
    }

    pub fn act_prof_modify_member(&mut self, profile: &str, member: u32, action: &str, args: &[Val]) -> Result<(), EngineError> {
        let p = self.profile_id(profile)?;
        let (a, data) = self.member_action(p, action, args)?;
        self.rt.profiles[p as usize].modify_member(member, a, data).map_err(|e| self.prof_err(p, e))
    }

    pub fn act_prof_delete_member(&mut self, profile: &str, member: u32) -> Result<(), EngineError> {
        let p = self.profile_id(profile)?;
        self.rt.profiles[p as usize].delete_member(member).map_err(|e| self.prof_err(p, e))
    }

    pub fn act_prof_create_group(&mut self, profile: &str) -> Result<u32, EngineError> {
        let p = self.profile_id(profile)?;
        Ok(self.rt.profiles[p as usize].create_group())
    }

    pub fn act_prof_delete_group(&mut self, profile: &str, group: u32) -> Result<(), EngineError> {
        let p = self.profile_id(profile)?;
        self.rt.profiles[p as usize].delete_group(group).map_err(|e| self.prof_err(p, e))
    }

    pub fn act_prof_add_member_to_group(
        &mut self,
        profile: &str,
        member: u32,
        group: u32,
        weight: u32,
        watch_port: Option<u32>,
    ) -> Result<(), EngineError> {
        let p = self.profile_id(profile)?;
        self.rt.profiles[p as usize].add_to_group(member, group, weight, watch_port).map_err(|e| self.prof_err(p, e))
    }

    pub fn act_prof_remove_member_from_group(&mut self, profile: &str, member: u32, group: u32) -> Result<(), EngineError> {
        let p = self.profile_id(profile)?;
        self.rt.profiles[p as usize].remove_from_group(member, group).map_err(|e| self.prof_err(p, e))
    }

    fn indirect_target(&self, t: u32, r: Ref) -> Result<u32, EngineError> {
        let td = &self.prog.tables[t as usize];
        let Some(p) = td.profile else {
            return Err(EngineError::Invalid(format!("table '{}' is not an indirect table", td.name)));
        };
        let prof = &self.rt.profiles[p as usize];
        let ok = match r {
            Ref::Member(m) => prof.member(m).map(|_| ()),
            Ref::Group(g) => prof.group(g).map(|_| ()),
            Ref::Direct => Ok(()),
        };
        ok.map_err(|e| self.prof_err(p, e))?;
        Ok(p)
    }

    fn indirect_add(&mut self, table: &str, key: &[MatchValue], r: Ref, priority: i32) -> Result<u32, EngineError> {
        let t = self.table_id(table)?;
        self.indirect_target(t, r)?;
        let td = &self.prog.tables[t as usize];
        let a = *td.actions.first().ok_or_else(|| EngineError::Invalid(format!("table '{}' has no actions", td.name)))?;
        let nparams = self.prog.actions[a as usize].params.len();
        let h = self.rt.tables[t as usize]
            .add(td, key, priority, a, vec![Val::ZERO; nparams])
            .map_err(|err| EngineError::Table { table: td.name.clone(), err })?;
        let now = self.now_ns();
        if let Some(e) = self.rt.tables[t as usize].entries[h as usize].as_mut() {
            e.indirect = r;
            e.last_hit_ns = now;
        }
        Ok(h)
    }

    fn indirect_modify(&mut self, table: &str, handle: u32, r: Ref) -> Result<(), EngineError> {
        let t = self.table_id(table)?;
        self.indirect_target(t, r)?;
        let name = self.prog.tables[t as usize].name.clone();
        match self.rt.tables[t as usize].entries.get_mut(handle as usize).and_then(|e| e.as_mut()) {
            Some(e) => {
                e.indirect = r;
                Ok(())
            }
            None => Err(EngineError::Table { table: name, err: crate::tables::TableError::NoSuchEntry(handle) }),
        }
    }

    pub fn table_indirect_add(&mut self, table: &str, key: &[MatchValue], member: u32, priority: i32) -> Result<u32, EngineError> {
        self.indirect_add(table, key, Ref::Member(member), priority)
    }

    pub fn table_indirect_add_with_group(&mut self, table: &str, key: &[MatchValue], group: u32, priority: i32) -> Result<u32, EngineError> {
        self.indirect_add(table, key, Ref::Group(group), priority)
    }

    pub fn table_indirect_modify(&mut self, table: &str, handle: u32, member: u32) -> Result<(), EngineError> {
        self.indirect_modify(table, handle, Ref::Member(member))
    }

    pub fn table_indirect_modify_with_group(&mut self, table: &str, handle: u32, group: u32) -> Result<(), EngineError> {
        self.indirect_modify(table, handle, Ref::Group(group))
    }

    // ----- idle timeout ----------------------------------------------------

    pub(super) fn entry_mut(&mut self, table: &str, handle: u32) -> Result<&mut crate::tables::Entry, EngineError> {
        let t = self.table_id(table)?;
        let name = self.prog.tables[t as usize].name.clone();
        self.rt.tables[t as usize]
            .entries
            .get_mut(handle as usize)
            .and_then(|e| e.as_mut())
            .ok_or(EngineError::Table { table: name, err: crate::tables::TableError::NoSuchEntry(handle) })
    }

    /// Sets an entry's idle timeout (None: never ages); its clock restarts.
    pub fn table_set_entry_ttl(&mut self, table: &str, handle: u32, ttl_ns: Option<u64>) -> Result<(), EngineError> {
        let now = self.now_ns();
        let e = self.entry_mut(table, handle)?;
        e.ttl_ns = ttl_ns.and_then(std::num::NonZeroU64::new);
        e.last_hit_ns = now;
        e.idle_notified = false;
        Ok(())
    }

    /// Nanoseconds since the entry was last hit (or added).
    pub fn table_entry_idle_ns(&mut self, table: &str, handle: u32) -> Result<u64, EngineError> {
        let now = self.now_ns();
        let e = self.entry_mut(table, handle)?;
        Ok(now.saturating_sub(e.last_hit_ns))
    }

    /// Entries whose idle timeout expired by `now`, each reported once
    /// until it is hit again: (table name, handle, idle ns).
    pub fn idle_sweep(&mut self, now_ns: u64) -> Vec<(String, u32, u64)> {
        let mut out = vec![];
        for (ti, t) in self.rt.tables.iter_mut().enumerate() {
            if !self.prog.tables[ti].support_timeout {
                continue;
            }
            for (h, e) in t.entries.iter_mut().enumerate() {
                let Some(e) = e.as_mut() else { continue };
                if let Some(ttl) = e.ttl_ns.map(|t| t.get()) {
                    let idle = now_ns.saturating_sub(e.last_hit_ns);
                    if idle >= ttl && !e.idle_notified {
                        e.idle_notified = true;
                        out.push((self.prog.tables[ti].name.clone(), h as u32, idle));
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A table `t` on ethernet-less packets: key standard_metadata.ingress_port,
    /// indirect through profile `ap` (selector over ingress_port), action
    /// `fwd(port)`.
    pub(super) fn prog() -> String {
        crate::engine::tests::MINIMAL.replace(
            r#""pipelines": [{"name": "ingress", "id": 0, "init_table": null, "tables": [], "conditionals": []},"#,
            r#""actions": [{"name": "fwd", "id": 0, "runtime_data": [{"name": "p", "bitwidth": 9}], "primitives": [
      {"op": "assign", "parameters": [{"type": "field", "value": ["standard_metadata", "egress_spec"]},
                                      {"type": "runtime_data", "value": 0}]}]}],
  "pipelines": [{"name": "ingress", "id": 0, "init_table": "t", "conditionals": [],
    "action_profiles": [{"name": "ap", "id": 0, "max_size": 16,
                         "selector": {"algo": "identity", "input": [{"type": "field", "value": ["standard_metadata", "ingress_port"]}]}}],
    "tables": [
      {"name": "t", "id": 0, "key": [], "match_type": "exact", "type": "indirect_ws", "action_profile": "ap",
       "max_size": 4, "support_timeout": true,
       "action_ids": [0], "actions": ["fwd"], "next_tables": {"fwd": null}}]},"#,
        )
    }

    fn out_ports(sw: &mut Switch, ins: &[u32]) -> Vec<u32> {
        // one packet per nanosecond, so outputs come in input order
        let t0 = sw.now_ns() + 1;
        for (i, p) in ins.iter().enumerate() {
            sw.inject(*p, vec![0; 20], t0 + i as u64);
        }
        sw.run_until_idle();
        sw.take_outputs().iter().map(|o| o.port).collect()
    }

    #[test]
    fn selector_picks_hash_modulo_group_size_with_weights_and_watch_ports() {
        let mut sw = Switch::from_json(&prog()).unwrap();
        let a = sw.act_prof_create_member("ap", "fwd", &[Val::from(10u64)]).unwrap();
        let b = sw.act_prof_create_member("ap", "fwd", &[Val::from(20u64)]).unwrap();
        let g = sw.act_prof_create_group("ap").unwrap();
        sw.act_prof_add_member_to_group("ap", a, g, 1, None).unwrap();
        sw.act_prof_add_member_to_group("ap", b, g, 1, Some(20)).unwrap();
        sw.table_indirect_add_with_group("t", &[], g, 0).unwrap();
        // identity hash of the 9-bit port packed MSB first (port << 7), modulo 2
        let ports: Vec<u32> = (0..8).collect();
        let got = out_ports(&mut sw, &ports);
        let want: Vec<u32> = ports.iter().map(|p| if ((*p as u64) << 7) % 2 == 0 { 10 } else { 20 }).collect();
        assert_eq!(got, want);
        // three members' worth: [a, a, b] with a of weight 2
        sw.act_prof_remove_member_from_group("ap", a, g).unwrap();
        sw.act_prof_add_member_to_group("ap", a, g, 2, None).unwrap();
        let got = out_ports(&mut sw, &ports);
        let want: Vec<u32> = ports.iter().map(|p| if ((*p as u64) << 7) % 3 == 2 { 20 } else { 10 }).collect();
        assert_eq!(got, want);
        assert!(want.contains(&20));
        sw.set_port_status(20, false);
        assert!(out_ports(&mut sw, &ports).iter().all(|p| *p == 10), "watch port 20 down");
        sw.set_port_status(20, true);
        assert!(sw.act_prof_delete_member("ap", a).is_err(), "still in a group");
    }

    #[test]
    fn members_and_modify_and_idle_timeout() {
        let mut sw = Switch::from_json(&prog()).unwrap();
        let a = sw.act_prof_create_member("ap", "fwd", &[Val::from(3u64)]).unwrap();
        let h = sw.table_indirect_add("t", &[], a, 0).unwrap();
        assert_eq!(out_ports(&mut sw, &[1]), vec![3]);
        sw.act_prof_modify_member("ap", a, "fwd", &[Val::from(4u64)]).unwrap();
        assert_eq!(out_ports(&mut sw, &[1]), vec![4]);
        let g = sw.act_prof_create_group("ap").unwrap();
        sw.table_indirect_modify_with_group("t", h, g).unwrap();
        assert_eq!(out_ports(&mut sw, &[1]), vec![0], "empty group: no action runs");
        sw.table_indirect_modify("t", h, a).unwrap();
        assert!(sw.table_indirect_add("t", &[], 99, 0).is_err());
        sw.table_set_entry_ttl("t", h, Some(1000)).unwrap();
        sw.advance(10_000);
        let idle = sw.idle_sweep(sw.now_ns());
        assert_eq!(idle.len(), 1);
        assert_eq!((idle[0].0.as_str(), idle[0].1), ("t", h));
        assert!(sw.idle_sweep(sw.now_ns()).is_empty(), "reported once");
        out_ports(&mut sw, &[1]);
        assert_eq!(sw.table_entry_idle_ns("t", h).unwrap(), 0, "the hit restarted its clock");
    }
}
