//! Action profiles and selectors (BMv2's run-time names), indirect table
//! entries, and the port status that selector watch ports follow.

use super::*;

#[pymethods]
impl Engine {
    /// A member of action profile `profile`: the action and its arguments.
    #[pyo3(signature = (profile, action, args=None))]
    fn act_prof_create_member(&mut self, profile: &str, action: &str, args: Option<&Bound<'_, PyAny>>) -> PyResult<u32> {
        let a = vals(args)?;
        guard(|| self.lock().sw.act_prof_create_member(profile, action, &a).map_err(to_py))
    }

    #[pyo3(signature = (profile, member, action, args=None))]
    fn act_prof_modify_member(&mut self, profile: &str, member: u32, action: &str, args: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let a = vals(args)?;
        guard(|| self.lock().sw.act_prof_modify_member(profile, member, action, &a).map_err(to_py))
    }

    fn act_prof_delete_member(&mut self, profile: &str, member: u32) -> PyResult<()> {
        guard(|| self.lock().sw.act_prof_delete_member(profile, member).map_err(to_py))
    }

    fn act_prof_create_group(&mut self, profile: &str) -> PyResult<u32> {
        guard(|| self.lock().sw.act_prof_create_group(profile).map_err(to_py))
    }

    fn act_prof_delete_group(&mut self, profile: &str, group: u32) -> PyResult<()> {
        guard(|| self.lock().sw.act_prof_delete_group(profile, group).map_err(to_py))
    }

    /// Adds a member to a group; `weight` counts it that many times in the
    /// selection, `watch_port` leaves it out while that port is down.
    #[pyo3(signature = (profile, member, group, weight=1, watch_port=None))]
    fn act_prof_add_member_to_group(&mut self, profile: &str, member: u32, group: u32, weight: u32, watch_port: Option<u32>) -> PyResult<()> {
        guard(|| self.lock().sw.act_prof_add_member_to_group(profile, member, group, weight, watch_port).map_err(to_py))
    }

    fn act_prof_remove_member_from_group(&mut self, profile: &str, member: u32, group: u32) -> PyResult<()> {
        guard(|| self.lock().sw.act_prof_remove_member_from_group(profile, member, group).map_err(to_py))
    }

    /// The port's link goes down or up now: watch ports follow (every port
    /// is up until said otherwise), frames to and from a down port are
    /// dropped and counted, and a change is a port event (links.rs).
    fn set_port_status(&mut self, port: u32, up: bool) {
        self.lock().sw.set_port_status(port, up)
    }

    /// An entry of an indirect table running a member; returns its handle.
    #[pyo3(signature = (table, key, member, priority=0))]
    fn table_indirect_add(&mut self, table: &str, key: &Bound<'_, PyAny>, member: u32, priority: i32) -> PyResult<u32> {
        let k = to_key(key)?;
        guard(|| self.lock().sw.table_indirect_add(table, &k, member, priority).map_err(to_py))
    }

    /// An entry of an indirect table running a group (selector: hash % size).
    #[pyo3(signature = (table, key, group, priority=0))]
    fn table_indirect_add_with_group(&mut self, table: &str, key: &Bound<'_, PyAny>, group: u32, priority: i32) -> PyResult<u32> {
        let k = to_key(key)?;
        guard(|| self.lock().sw.table_indirect_add_with_group(table, &k, group, priority).map_err(to_py))
    }

    fn table_indirect_modify(&mut self, table: &str, handle: u32, member: u32) -> PyResult<()> {
        guard(|| self.lock().sw.table_indirect_modify(table, handle, member).map_err(to_py))
    }

    fn table_indirect_modify_with_group(&mut self, table: &str, handle: u32, group: u32) -> PyResult<()> {
        guard(|| self.lock().sw.table_indirect_modify_with_group(table, handle, group).map_err(to_py))
    }
}
