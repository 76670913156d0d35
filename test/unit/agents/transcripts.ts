// What each agent CLI prints, in its own format: successful runs (the verdict inside the final
// message, a cost where the tool reports one) and runs that hit a limit. The parsers' tests read
// them directly; the fake executables of the end-to-end tests replay the successful ones.
// Shapes follow each tool's documentation and source (cited in src/core/agents/parsers/*).

/** Claude Code, `-p --output-format stream-json --verbose`. */
export const CLAUDE_SUCCESS =
  [
    '{"type":"system","subtype":"init","cwd":"/work/repo.launchpad-worktrees/task-001","session_id":"5b1f0c2e-6a55-4a8e-9d6b-1f4f0d2b9c11","tools":["Bash","Edit","Read","Write"],"mcp_servers":[],"model":"claude-sonnet-4-5-20250929","permissionMode":"bypassPermissions","apiKeySource":"none","uuid":"0b3f"}',
    '{"type":"assistant","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"text","text":"CHECKPOINT step=1/2 \\"wrote done.txt\\""},{"type":"tool_use","id":"toolu_01","name":"Bash","input":{"command":"git add -A && git commit -m done"}}],"stop_reason":null,"usage":{"input_tokens":4,"output_tokens":61}},"parent_tool_use_id":null,"session_id":"5b1f0c2e-6a55-4a8e-9d6b-1f4f0d2b9c11","uuid":"1c2d"}',
    '{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_01","type":"tool_result","content":"[harness-task-001 3f2a1b9] done\\nRESULT:FAIL a file the agent printed, not its verdict","is_error":false}]},"parent_tool_use_id":null,"session_id":"5b1f0c2e-6a55-4a8e-9d6b-1f4f0d2b9c11","uuid":"2d3e"}',
    '{"type":"assistant","message":{"id":"msg_02","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"text","text":"Committed the change.\\nRESULT:SUCCESS"}],"stop_reason":"end_turn","usage":{"input_tokens":6,"output_tokens":12}},"parent_tool_use_id":null,"session_id":"5b1f0c2e-6a55-4a8e-9d6b-1f4f0d2b9c11","uuid":"3e4f"}',
    '{"type":"result","subtype":"success","is_error":false,"duration_ms":12034,"duration_api_ms":11020,"num_turns":4,"result":"Committed the change.\\nRESULT:SUCCESS","stop_reason":"end_turn","session_id":"5b1f0c2e-6a55-4a8e-9d6b-1f4f0d2b9c11","total_cost_usd":0.0421,"usage":{"input_tokens":1200,"cache_creation_input_tokens":5000,"cache_read_input_tokens":20012,"output_tokens":340,"server_tool_use":{"web_search_requests":0},"service_tier":"standard"},"modelUsage":{"claude-sonnet-4-5-20250929":{"inputTokens":1200,"outputTokens":340,"cacheReadInputTokens":20012,"cacheCreationInputTokens":5000,"costUSD":0.0421}},"permission_denials":[],"uuid":"4f50"}',
  ].join('\n') + '\n';

/** Claude Code out of its 5-hour window: a rate_limit_event, then an error result. */
export const CLAUDE_USAGE_LIMIT =
  [
    '{"type":"system","subtype":"init","session_id":"77aa","model":"claude-opus-4-1","permissionMode":"bypassPermissions","uuid":"a1"}',
    '{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1767283200,"rateLimitType":"five_hour","utilization":1},"uuid":"a2","session_id":"77aa"}',
    '{"type":"assistant","message":{"id":"msg_x","type":"message","role":"assistant","content":[{"type":"text","text":"You\'ve hit your limit · resets 3pm (Europe/Berlin)"}]},"parent_tool_use_id":null,"error":"rate_limit","session_id":"77aa","uuid":"a3"}',
    '{"type":"result","subtype":"success","is_error":true,"duration_ms":512,"duration_api_ms":0,"num_turns":1,"result":"You\'ve hit your limit · resets 3pm (Europe/Berlin)","session_id":"77aa","total_cost_usd":0,"usage":{"input_tokens":0,"output_tokens":0},"api_error_status":429,"uuid":"a4"}',
  ].join('\n') + '\n';

/** Older Claude Code releases: the reset time as epoch seconds after a "|". */
export const CLAUDE_OLD_USAGE_LIMIT =
  '{"type":"result","subtype":"success","is_error":true,"duration_ms":301,"num_turns":1,"result":"Claude AI usage limit reached|1762952400","session_id":"88bb","total_cost_usd":0,"usage":{"input_tokens":0,"output_tokens":0}}\n';

/** The API overloaded (HTTP 529) after Claude Code's own retries. */
export const CLAUDE_OVERLOADED =
  '{"type":"result","subtype":"success","is_error":true,"duration_ms":98123,"num_turns":2,"result":"API Error: 529 {\\"type\\":\\"error\\",\\"error\\":{\\"type\\":\\"overloaded_error\\",\\"message\\":\\"Overloaded\\"}}","session_id":"99cc","total_cost_usd":0.0012,"usage":{"input_tokens":10,"output_tokens":0},"api_error_status":529}\n';

/** Codex CLI, `codex exec --json`. */
export const CODEX_SUCCESS =
  [
    '{"type":"thread.started","thread_id":"0199a213-81c0-7800-8aa1-bbab2a035a53"}',
    '{"type":"turn.started"}',
    '{"type":"item.completed","item":{"id":"item_0","type":"reasoning","text":"**Writing the file and committing**"}}',
    '{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"bash -lc \'git add -A && git commit -m done\'","aggregated_output":"","exit_code":null,"status":"in_progress"}}',
    '{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"bash -lc \'git add -A && git commit -m done\'","aggregated_output":"RESULT:FAIL printed by a command\\n","exit_code":0,"status":"completed"}}',
    '{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"CHECKPOINT step=1/1 \\"committed\\"\\nDone.\\nRESULT:SUCCESS"}}',
    '{"type":"turn.completed","usage":{"input_tokens":24763,"cached_input_tokens":24448,"output_tokens":122}}',
  ].join('\n') + '\n';

export const CODEX_USAGE_LIMIT =
  [
    '{"type":"thread.started","thread_id":"0199b000-0000-7000-8000-000000000001"}',
    '{"type":"turn.started"}',
    '{"type":"error","message":"You\'ve hit your usage limit. Upgrade to Pro (https://openai.com/chatgpt/pricing), visit https://chatgpt.com/codex/settings/usage to purchase more credits or try again at 3:28 PM."}',
    '{"type":"turn.failed","error":{"message":"You\'ve hit your usage limit. Upgrade to Pro (https://openai.com/chatgpt/pricing), visit https://chatgpt.com/codex/settings/usage to purchase more credits or try again at 3:28 PM."}}',
  ].join('\n') + '\n';

/** Gemini CLI, `--output-format stream-json`: the assistant's text comes in deltas. */
export const GEMINI_SUCCESS =
  [
    '{"type":"init","timestamp":"2026-08-20T10:00:00.000Z","session_id":"c0ffee00-1111-2222-3333-444455556666","model":"gemini-2.5-pro"}',
    '{"type":"message","timestamp":"2026-08-20T10:00:00.010Z","role":"user","content":"Your task.\\nRESULT:SUCCESS\\n(the prompt quotes the verdict lines)"}',
    '{"type":"message","timestamp":"2026-08-20T10:00:02.000Z","role":"assistant","content":"CHECKPOINT step=1/2 \\"read the","delta":true}',
    '{"type":"message","timestamp":"2026-08-20T10:00:02.100Z","role":"assistant","content":" code\\"","delta":true}',
    '{"type":"tool_use","timestamp":"2026-08-20T10:00:03.000Z","tool_name":"run_shell_command","tool_id":"run_shell_command-1","parameters":{"command":"git add -A && git commit -m done"}}',
    '{"type":"tool_result","timestamp":"2026-08-20T10:00:03.500Z","tool_id":"run_shell_command-1","status":"success","output":"RESULT:FAIL printed by a command"}',
    '{"type":"message","timestamp":"2026-08-20T10:00:05.000Z","role":"assistant","content":"All done.\\nRESULT:","delta":true}',
    '{"type":"message","timestamp":"2026-08-20T10:00:05.050Z","role":"assistant","content":"SUCCESS","delta":true}',
    '{"type":"result","timestamp":"2026-08-20T10:00:05.200Z","status":"success","stats":{"total_tokens":25113,"input_tokens":24939,"output_tokens":174,"cached":21263,"input":3676,"duration_ms":5200,"tool_calls":1,"models":{"gemini-2.5-pro":{"total_tokens":25113,"input_tokens":24939,"output_tokens":174,"cached":21263,"input":3676}}}}',
  ].join('\n') + '\n';

export const GEMINI_QUOTA =
  [
    '{"type":"init","timestamp":"2026-08-20T10:00:00.000Z","session_id":"d00d","model":"gemini-2.5-pro"}',
    '{"type":"result","timestamp":"2026-08-20T10:00:01.000Z","status":"error","error":{"type":"TerminalQuotaError","message":"[API Error: You have exhausted your capacity on this model. Your quota will reset after 2h7m31s.]"},"stats":{"total_tokens":0,"input_tokens":0,"output_tokens":0,"cached":0,"input":0,"duration_ms":0,"tool_calls":0,"models":{}}}',
  ].join('\n') + '\n';

/** Aider with --no-pretty: plain text, a cost line per reply. */
export const AIDER_SUCCESS =
  [
    'Aider v0.86.1',
    'Main model: anthropic/claude-sonnet-4-20250514 with diff edit format, infinite output',
    'Git repo: .git with 3 files',
    'Repo-map: using 4096 tokens, auto refresh',
    '',
    'CHECKPOINT step=1/2 "editing done.txt"',
    '',
    'src/task-001/done.txt',
    '<<<<<<< SEARCH',
    '=======',
    'done',
    '>>>>>>> REPLACE',
    '',
    'Tokens: 2.5k sent, 123 received. Cost: $0.0098 message, $0.0098 session.',
    'Applied edit to src/task-001/done.txt',
    'Commit 1a2b3c4 feat: Add done.txt',
    'RESULT:SUCCESS',
    'Tokens: 3.1k sent, 1.1k cache write, 2.0k cache hit, 45 received.',
    'Cost: $0.01 message, $0.02 session.',
  ].join('\n') + '\n';

export const AIDER_RATE_LIMIT =
  [
    'Aider v0.86.1',
    'The model says: add rate limiting (a RateLimitError is what the middleware should raise).',
    'litellm.RateLimitError: AnthropicException - {"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization"}}',
    'The API provider has rate limited you. Try again later or check your quotas.',
    'Retrying in 0.2 seconds...',
  ].join('\n') + '\n';

/** OpenCode, `opencode run --format json`: cost and tokens per step. */
export const OPENCODE_SUCCESS =
  [
    '{"type":"step_start","timestamp":1767000000000,"sessionID":"ses_6f1a","part":{"id":"prt_1","sessionID":"ses_6f1a","messageID":"msg_1","type":"step-start","snapshot":"4b825dc"}}',
    '{"type":"text","timestamp":1767000001000,"sessionID":"ses_6f1a","part":{"id":"prt_2","sessionID":"ses_6f1a","messageID":"msg_1","type":"text","text":"CHECKPOINT step=1/2 \\"planned\\"","time":{"start":1767000000500,"end":1767000001000}}}',
    '{"type":"tool_use","timestamp":1767000002000,"sessionID":"ses_6f1a","part":{"id":"prt_3","sessionID":"ses_6f1a","messageID":"msg_1","type":"tool","callID":"toolu_1","tool":"bash","state":{"status":"completed","input":{"command":"git add -A && git commit -m done"},"output":"RESULT:FAIL printed by a command\\n","title":"git commit","metadata":{},"time":{"start":1767000001500,"end":1767000002000}}}}',
    '{"type":"step_finish","timestamp":1767000002100,"sessionID":"ses_6f1a","part":{"id":"prt_4","sessionID":"ses_6f1a","messageID":"msg_1","type":"step-finish","reason":"tool-calls","cost":0.0125,"tokens":{"input":1000,"output":100,"reasoning":0,"cache":{"read":200,"write":0}}}}',
    '{"type":"step_start","timestamp":1767000002200,"sessionID":"ses_6f1a","part":{"id":"prt_5","sessionID":"ses_6f1a","messageID":"msg_2","type":"step-start"}}',
    '{"type":"text","timestamp":1767000003000,"sessionID":"ses_6f1a","part":{"id":"prt_6","sessionID":"ses_6f1a","messageID":"msg_2","type":"text","text":"Done.\\nRESULT:SUCCESS","time":{"start":1767000002500,"end":1767000003000}}}',
    '{"type":"step_finish","timestamp":1767000003100,"sessionID":"ses_6f1a","part":{"id":"prt_7","sessionID":"ses_6f1a","messageID":"msg_2","type":"step-finish","reason":"stop","cost":0.0175,"tokens":{"input":1500,"output":60,"reasoning":10,"cache":{"read":900,"write":100}}}}',
    '{"type":"done","timestamp":1767000003200,"sessionID":"ses_6f1a","reason":"idle","rejected":[]}',
  ].join('\n') + '\n';

export const OPENCODE_RATE_LIMIT =
  '{"type":"error","timestamp":1767000000100,"sessionID":"ses_7a2b","error":{"name":"APIError","data":{"message":"Too Many Requests","statusCode":429,"isRetryable":true}}}\n';

/** Qwen Code 0.24.4, `--output-format stream-json --approval-mode yolo`, as it printed it against a scripted server. */
export const QWEN_SUCCESS =
  [
    '{"type":"system","subtype":"init","uuid":"20f7443a-290f-40ac-afd5-6304a6f2f22e","session_id":"20f7443a-290f-40ac-afd5-6304a6f2f22e","cwd":"/work/repo.launchpad-worktrees/task-001","tools":["get_goal","update_goal","tool_search","read_mcp_resource","agent","list_agents","tool_call","send_message","read_file","zoom_image","skill","write_file","report_findings","enter_worktree","exit_worktree","record_artifact","cron_create","run_shell_command","cron_list","cron_delete","monitor","web_fetch","loop_wakeup","grep_search","edit","notebook_edit","task_stop","glob"],"mcp_servers":[],"model":"scripted-1","permission_mode":"yolo","slash_commands":["auth","batch","browser-use","bug","clear","compress","compress-fast","computer-use","config","context","coordinate","curator","dataviz","diff","docs","doctor","effort","export","extension-creator","extensions","goal","goal-draft","hooks","import-config","init","insight","language","loop","model","new-app","output-style","qc-helper","review","simplify","stats","status","stuck","summary","tasks","update","workflow-authoring","workflow-creator","zvec-grep-install"],"qwen_code_version":"0.24.4","agents":["general-purpose","Explore","statusline-setup","review-agent","claude-code","codex"]}',
    '{"type":"stream_event","uuid":"fcea6c3f-70c5-4e26-99a4-62b67eb97c3f","session_id":"20f7443a-290f-40ac-afd5-6304a6f2f22e","parent_tool_use_id":null,"event":{"type":"goal_state","goal_state":{"v":2,"goal":null,"activity":"idle"}}}',
    '{"type":"assistant","uuid":"2ee42ffc-1c71-418c-bc39-79fcfa8805c4","session_id":"20f7443a-290f-40ac-afd5-6304a6f2f22e","parent_tool_use_id":null,"message":{"id":"2ee42ffc-1c71-418c-bc39-79fcfa8805c4","type":"message","role":"assistant","model":"scripted-1","content":[{"type":"tool_use","id":"call_1","name":"write_file","input":{"file_path":"/work/repo.launchpad-worktrees/task-001/done.txt","content":"done\\n"}}],"stop_reason":"tool_use","usage":{"input_tokens":1200,"output_tokens":40,"cache_read_input_tokens":200,"total_tokens":1240}}}',
    '{"type":"user","uuid":"d81ecc46-efc5-4c62-89d8-518c7baa8ab9","session_id":"20f7443a-290f-40ac-afd5-6304a6f2f22e","parent_tool_use_id":null,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","is_error":false,"content":"Successfully created and wrote to new file: /work/repo.launchpad-worktrees/task-001/done.txt."}]}}',
    '{"type":"assistant","uuid":"724a0cf3-c434-42a8-a27c-3c978da615e0","session_id":"20f7443a-290f-40ac-afd5-6304a6f2f22e","parent_tool_use_id":null,"message":{"id":"724a0cf3-c434-42a8-a27c-3c978da615e0","type":"message","role":"assistant","model":"scripted-1","content":[{"type":"tool_use","id":"call_3","name":"run_shell_command","input":{"command":"echo RESULT:FAIL printed by a command"}}],"stop_reason":"tool_use","usage":{"input_tokens":1208,"output_tokens":43,"cache_read_input_tokens":201,"total_tokens":1251}}}',
    '{"type":"user","uuid":"2d592628-0cdc-47d7-8789-99c6ae816373","session_id":"20f7443a-290f-40ac-afd5-6304a6f2f22e","parent_tool_use_id":null,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_3","is_error":false,"content":"RESULT:FAIL printed by a command"}]}}',
    '{"type":"assistant","uuid":"621e087f-8f10-4001-bb17-8434b181e53a","session_id":"20f7443a-290f-40ac-afd5-6304a6f2f22e","parent_tool_use_id":null,"message":{"id":"621e087f-8f10-4001-bb17-8434b181e53a","type":"message","role":"assistant","model":"scripted-1","content":[{"type":"text","text":"CHECKPOINT step=1/1 \\"wrote done.txt\\"\\nWrote done.txt.\\nRESULT:SUCCESS"}],"stop_reason":null,"usage":{"input_tokens":1216,"output_tokens":46,"cache_read_input_tokens":202,"total_tokens":1262}}}',
    '{"type":"result","subtype":"success","uuid":"a78a4c76-f8d6-43bd-a294-113efaec206d","session_id":"20f7443a-290f-40ac-afd5-6304a6f2f22e","is_error":false,"duration_ms":1956,"duration_api_ms":911,"num_turns":3,"result":"CHECKPOINT step=1/1 \\"wrote done.txt\\"\\nWrote done.txt.\\nRESULT:SUCCESS","usage":{"input_tokens":3624,"output_tokens":129,"cache_read_input_tokens":603,"total_tokens":3753},"permission_denials":[]}',
  ].join('\n') + '\n';

/** Qwen Code after its own retries of a 429 (OpenAI's wording). */
export const QWEN_RATE_LIMIT =
  [
    '{"type":"system","subtype":"init","uuid":"96f30948-0943-404e-90fc-da9f208ad05c","session_id":"96f30948-0943-404e-90fc-da9f208ad05c","cwd":"/work/repo.launchpad-worktrees/task-001","tools":["tool_search","read_mcp_resource","agent","list_agents","web_fetch","send_message","get_goal","update_goal","read_file","zoom_image","run_shell_command","write_file","report_findings","enter_worktree","exit_worktree","record_artifact","cron_create","cron_list","loop_wakeup","monitor","cron_delete","tool_call","skill","task_stop","grep_search","glob","edit","notebook_edit"],"mcp_servers":[],"model":"scripted-1","permission_mode":"yolo","slash_commands":["auth","batch","browser-use","bug","clear","compress","compress-fast","computer-use","config","context","coordinate","curator","dataviz","diff","docs","doctor","effort","export","extension-creator","extensions","goal","goal-draft","hooks","import-config","init","insight","language","loop","model","new-app","output-style","qc-helper","review","simplify","stats","status","stuck","summary","tasks","update","workflow-authoring","workflow-creator","zvec-grep-install"],"qwen_code_version":"0.24.4","agents":["general-purpose","Explore","statusline-setup","review-agent","claude-code","codex"]}',
    '{"type":"stream_event","uuid":"e8cdc67d-9d31-4b83-a79a-6615c079f0fb","session_id":"96f30948-0943-404e-90fc-da9f208ad05c","parent_tool_use_id":null,"event":{"type":"goal_state","goal_state":{"v":2,"goal":null,"activity":"idle"}}}',
    '{"type":"assistant","uuid":"31802d60-4d6d-4c93-9665-5f3217f9a594","session_id":"96f30948-0943-404e-90fc-da9f208ad05c","parent_tool_use_id":null,"message":{"id":"31802d60-4d6d-4c93-9665-5f3217f9a594","type":"message","role":"assistant","model":"scripted-1","content":[{"type":"text","text":"[API Error: 429 Rate limit reached for qwen3-coder-plus on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s.]\\nPossible quota limitations in place or slow response times detected. Please wait and try again later."}],"stop_reason":null,"usage":{"input_tokens":0,"output_tokens":0}}}',
    '{"type":"result","subtype":"error_during_execution","uuid":"258ae7d6-08b6-4051-aabe-f88707b8ab29","session_id":"96f30948-0943-404e-90fc-da9f208ad05c","is_error":true,"duration_ms":6422,"duration_api_ms":0,"num_turns":1,"usage":{"input_tokens":0,"output_tokens":0,"cache_read_input_tokens":0},"permission_denials":[],"error":{"message":"[API Error: 429 Rate limit reached for qwen3-coder-plus on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s.]\\nPossible quota limitations in place or slow response times detected. Please wait and try again later."}}',
  ].join('\n') + '\n';

/** Cursor's agent, `-p --output-format stream-json`: one line per complete message. */
export const CURSOR_SUCCESS =
  [
    '{"type":"system","subtype":"init","apiKeySource":"login","cwd":"/work/repo.launchpad-worktrees/task-001","session_id":"c6b62c6f-7ead-4fd6-9922-e952131177ff","model":"Claude 4 Sonnet","permissionMode":"default"}',
    '{"type":"user","message":{"role":"user","content":[{"type":"text","text":"Your task.\\nRESULT:SUCCESS"}]},"session_id":"c6b62c6f-7ead-4fd6-9922-e952131177ff"}',
    '{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"CHECKPOINT step=1/1 \\"edited\\""}]},"session_id":"c6b62c6f-7ead-4fd6-9922-e952131177ff"}',
    '{"type":"tool_call","subtype":"started","call_id":"toolu_vrtx_1","tool_call":{"shellToolCall":{"args":{"command":"git commit -am done"}}},"session_id":"c6b62c6f-7ead-4fd6-9922-e952131177ff"}',
    '{"type":"tool_call","subtype":"completed","call_id":"toolu_vrtx_1","tool_call":{"shellToolCall":{"args":{"command":"git commit -am done"},"result":{"success":{"stdout":"RESULT:FAIL printed by a command\\n","exitCode":0}}}},"session_id":"c6b62c6f-7ead-4fd6-9922-e952131177ff"}',
    '{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Committed.\\nRESULT:SUCCESS"}]},"session_id":"c6b62c6f-7ead-4fd6-9922-e952131177ff"}',
    '{"type":"result","subtype":"success","duration_ms":5234,"duration_api_ms":5234,"is_error":false,"result":"CHECKPOINT step=1/1 \\"edited\\"Committed.\\nRESULT:SUCCESS","session_id":"c6b62c6f-7ead-4fd6-9922-e952131177ff","request_id":"10e11780-df2f-45dc-a1ff-4540af32e9c0"}',
  ].join('\n') + '\n';

/** GitHub Copilot CLI, `--output-format json`: session events. */
export const COPILOT_SUCCESS =
  [
    '{"type":"user.message","data":{"content":"Your task.\\nRESULT:SUCCESS"}}',
    '{"type":"assistant.message_delta","data":{"messageId":"m1","deltaContent":"CHECKPOINT step=1/1 \\"edited\\""}}',
    '{"type":"assistant.message","data":{"messageId":"m1","content":"CHECKPOINT step=1/1 \\"edited\\"","toolRequests":[{"toolCallId":"t1","name":"bash","arguments":{"command":"git commit -am done"}}]}}',
    '{"type":"assistant.usage","data":{"model":"claude-sonnet-4.5","inputTokens":1800,"outputTokens":90,"cacheReadTokens":1200,"cacheWriteTokens":0}}',
    '{"type":"tool.execution_complete","data":{"toolCallId":"t1","success":true,"result":{"content":"RESULT:FAIL printed by a command"}}}',
    '{"type":"assistant.message","data":{"messageId":"m3","content":"Committed.\\nRESULT:SUCCESS"}}',
    '{"type":"assistant.usage","data":{"model":"claude-sonnet-4.5","inputTokens":2100,"outputTokens":40,"cacheReadTokens":1700,"cacheWriteTokens":0}}',
    '{"type":"result","timestamp":"2026-08-23T00:00:00Z","sessionId":"0c5c0d9e-4f7a-4d55-9d1b-6f3c2b1a0e9d","exitCode":0,"usage":{"premiumRequests":1,"totalApiDurationMs":8123,"sessionDurationMs":9345,"codeChanges":{"linesAdded":1,"linesRemoved":0,"filesModified":["src/task-001/done.txt"]}}}',
  ].join('\n') + '\n';

export const COPILOT_RATE_LIMIT =
  [
    '{"type":"session.error","data":{"errorType":"rate_limit","message":"Sorry, you\'ve hit a rate limit that restricts the number of Copilot model requests you can make within a specific time period. Please try again in 2 hours. Please review our Terms of Service (https://docs.github.com/site-policy/github-terms/github-terms-of-service)."}}',
    '{"type":"result","timestamp":"2026-08-23T00:00:00Z","sessionId":"1d6d","exitCode":1,"usage":{"premiumRequests":0}}',
  ].join('\n') + '\n';
