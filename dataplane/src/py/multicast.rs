//! The packet replication engine's groups and nodes (BMv2's `mc_*` calls).

use super::*;

#[pymethods]
impl Engine {
    fn mc_group_create(&mut self, mgid: u32) -> u32 {
        self.lock().sw.pre.group_create(mgid)
    }

    fn mc_group_destroy(&mut self, mgid: u32) {
        self.lock().sw.pre.group_destroy(mgid)
    }

    /// Creates an L1 node (rid, ports); returns its handle.
    fn mc_node_create(&mut self, rid: u32, ports: Vec<u32>) -> u32 {
        self.lock().sw.pre.node_create(rid, &ports)
    }

    fn mc_node_update(&mut self, node: u32, ports: Vec<u32>) -> PyResult<()> {
        if self.lock().sw.pre.node_update(node, &ports) {
            Ok(())
        } else {
            Err(EngineError::new_err(format!("no multicast node {node}")))
        }
    }

    fn mc_node_destroy(&mut self, node: u32) -> PyResult<()> {
        if self.lock().sw.pre.node_destroy(node) {
            Ok(())
        } else {
            Err(EngineError::new_err(format!("no multicast node {node}")))
        }
    }

    fn mc_node_associate(&mut self, mgid: u32, node: u32) -> PyResult<()> {
        if self.lock().sw.pre.node_associate(mgid, node) {
            Ok(())
        } else {
            Err(EngineError::new_err(format!("no multicast group {mgid} or node {node}")))
        }
    }

    fn mc_node_dissociate(&mut self, mgid: u32, node: u32) -> PyResult<()> {
        if self.lock().sw.pre.node_dissociate(mgid, node) {
            Ok(())
        } else {
            Err(EngineError::new_err(format!("no multicast group {mgid}")))
        }
    }
}
