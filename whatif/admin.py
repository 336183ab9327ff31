from django.contrib import admin

from whatif.models import WhatIfRun, WhatIfStudy


@admin.register(WhatIfStudy)
class WhatIfStudyAdmin(admin.ModelAdmin):
    list_display = ("name", "machine", "source", "run_count", "user", "created_at")
    list_filter = ("source",)
    exclude = ("workload",)


@admin.register(WhatIfRun)
class WhatIfRunAdmin(admin.ModelAdmin):
    list_display = ("id", "study", "policy", "spares", "seed", "status", "attempts")
    list_filter = ("status", "policy")
    readonly_fields = ("result", "log")
