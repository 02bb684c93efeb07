import ldm_patched.modules.args_parser as args_parser

args_parser.parser.add_argument("--share", action='store_true', help="Set whether to share on Gradio.")
args_parser.parser.add_argument("--preset", type=str, default=None, help="Apply specified UI preset.")
args_parser.parser.set_defaults(disable_cuda_malloc=True, in_browser=True, port=None)
args = args_parser.parser.parse_args()
