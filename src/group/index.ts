/** Group membership (Curator's `GroupMember`). @module */
export { GroupMember, type GroupMemberEvents, type GroupMemberOptions, type GroupMemberState, type GroupStartOptions, type GroupView, type GroupViewsOptions } from './group-member.js';
