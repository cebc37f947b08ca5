/**
 * The custom type of the messages the shepherd pushes into its conversation: the renderer is
 * registered under it when pi starts, long before anything that makes such a message is loaded.
 */
export const PUSH_TYPE = "pi-shepherd";
